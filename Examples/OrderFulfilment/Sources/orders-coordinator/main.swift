// The order-fulfilment coordinator: the library's coordinator hosting this app's root.
import OrderFulfilment
import WorkflowCluster
import WorkflowClusterCommands

await WorkflowCoordinatorCommand.main(roots: RootWorkflowRegistry().registering("orders") { FulfilmentDashboardWorkflow() })
