/// The apply context the runtime (and a tester given a workflow) uses: it holds the workflow
/// whose props actions read.
///
/// A subclass rather than storage in ``ApplyContext`` itself so that a context without props can
/// exist for testers (see `PropslessApplyContext`) while the runtime's props stay a plain
/// stored value, read without a generic metadata lookup.
final class RuntimeApplyContext<WorkflowType: Workflow>: ApplyContext<WorkflowType> {
    private var workflow: WorkflowType

    init(workflow: WorkflowType) {
        self.workflow = workflow
        super.init()
    }

    override func value<Value>(at keyPath: KeyPath<WorkflowType, Value>) -> Value {
        workflow[keyPath: keyPath]
    }

    /// Makes an invalidated context valid for another action with the current props (the
    /// runtime reuses a context only when nothing but itself refers to it).
    func renew(workflow: WorkflowType) {
        self.workflow = workflow
        renewValidity()
    }
}
