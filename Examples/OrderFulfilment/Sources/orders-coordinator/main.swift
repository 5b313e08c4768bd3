// The order-fulfilment coordinator: the library's coordinator hosting this app's root, and its
// page (OrdersWebPage.swift) for the gateway.
// (Quoted verbatim by docs/GUIDE.md between the markers.)
// GUIDE-BEGIN coordinator-main
import OrderFulfilment
import WorkflowCluster
import WorkflowClusterCommands

await WorkflowCoordinatorCommand.main(
    roots: RootWorkflowRegistry().registering("orders") { FulfilmentDashboardWorkflow() }, webAssets: OrdersWebPage.assets)
// GUIDE-END
