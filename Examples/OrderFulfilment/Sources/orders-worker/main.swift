// The order-fulfilment worker: the library's worker hosting this app's remote steps.
// (Quoted verbatim by docs/GUIDE.md between the markers.)
// GUIDE-BEGIN worker-main
import OrderFulfilment
import WorkflowClusterCommands
import WorkflowRemote

await WorkflowWorkerCommand.main(
    hosting: RemotableRegistry()
        .registering(OrderIntakeWorkflow.self)
        .registering(PackingWorkflow.self)
        .registering(ShippingWorkflow.self))
// GUIDE-END
