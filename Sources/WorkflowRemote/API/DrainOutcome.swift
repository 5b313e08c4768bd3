/// How a worker's drain (`RemoteRuntime.drain(deadline:)`) ended: how many of the children it
/// hosted were handed over to its parent, and why it stopped waiting.
///
/// A daemon logs it before it leaves, so an operator can tell a clean handover from one cut short
/// by the deadline (the children not handed over then move by the failover path instead, from
/// their last acknowledged state).
public struct DrainOutcome: Sendable, Equatable, CustomStringConvertible {
    /// Why the drain ended.
    public enum Ending: Sendable, Equatable {
        /// The parent took every child back (their final state included) and places them again.
        case handedOver
        /// The deadline passed first (the parent is stalled or unreachable).
        case deadlinePassed
        /// There is no parent to hand children to: the worker has none, is not welcomed, or lost
        /// it during the drain (its children were stopped, and the parent moves them as after a
        /// failure).
        case notConnected
        /// The parent predates draining (its WELCOME did not offer it): the worker leaves as before.
        case unsupportedByParent
        /// The runtime shut down before the drain ended.
        case interrupted
    }

    /// Why the drain ended.
    public var ending: Ending
    /// The children the worker hosted when the drain began.
    public var children: Int
    /// Of those, how many the parent took back with their final state.
    public var handedOver: Int

    /// Children that were not handed over (they move by the failover path, or were stale copies).
    public var notHandedOver: Int { max(0, children - handedOver) }

    /// Creates an outcome.
    public init(ending: Ending, children: Int, handedOver: Int) {
        self.ending = ending
        self.children = children
        self.handedOver = handedOver
    }

    public var description: String {
        let reason =
            switch ending {
            case .handedOver: "handed over"
            case .deadlinePassed: "the drain deadline passed"
            case .notConnected: "not connected to the parent"
            case .unsupportedByParent: "the parent does not support draining"
            case .interrupted: "interrupted by shutdown"
            }
        return "\(handedOver) of \(children) children handed over (\(reason))"
    }
}
