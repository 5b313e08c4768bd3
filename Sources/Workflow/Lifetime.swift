/// The lifetime of a side effect: from the render pass that first declared its key to the first
/// pass that does not (or the workflow's teardown).
///
/// Side effects use it to undo what they started (cancel a task, close a connection) exactly
/// when the workflow stops asking for them. Callbacks run on the host's loop.
public final class Lifetime {
    private var endedHandlers: [() -> Void] = []

    /// Whether the lifetime is over.
    public private(set) var hasEnded = false

    init() {}

    /// Registers `action` to run when the lifetime ends; runs it at once if it already has.
    public func onEnded(_ action: @escaping () -> Void) {
        if hasEnded {
            action()
        } else {
            endedHandlers.append(action)
        }
    }

    func end() {
        guard !hasEnded else { return }
        hasEnded = true
        let handlers = endedHandlers
        endedHandlers = []
        for handler in handlers { handler() }
    }
}
