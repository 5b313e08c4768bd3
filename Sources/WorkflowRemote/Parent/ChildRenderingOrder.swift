/// Which rendering of a remote child the parent shows: the props it sent are numbered, each
/// rendering says which props it was computed for, and a flush handed to the child's node waits
/// until the node applies it.
///
/// A worker may answer props the parent has since replaced, a replay may bring a rendering older
/// than the one shown, and a flush staged for the node must not be overtaken by a later one
/// (its outputs and its rendering become visible together, in order). These rules decide which
/// rendering is taken and when a render pass must follow; a value without I/O, kept by the
/// child's proxy (`RemoteChildProxy`) and tested on its own.
struct ChildRenderingOrder {
    /// What installing a rendering did (`install(renderingFor:placed:)`).
    enum Installation: Equatable {
        /// Older than the rendering shown: dropped.
        case stale
        /// The rendering of the props last sent, which the pass that settles them waits for:
        /// that pass shows it.
        case awaited
        /// Any other: the node must render again to show it.
        case unasked
    }

    /// The sequence of the props last sent (START = 1, each UPDATE + 1).
    private(set) var propsSequence: UInt64 = 0
    /// The props sequence of the latest rendering received, installed or still staged: what
    /// answers a START/UPDATE.
    private(set) var receivedSequence: UInt64 = 0
    /// The props sequence the rendering shown was computed for.
    private(set) var installedSequence: UInt64 = 0
    /// Flushes handed to the node and not yet applied by it. While any is pending, a later flush
    /// queues behind it, even one with a rendering only.
    private(set) var stagedFlushes = 0

    /// New props go out (START or UPDATE); returns their sequence.
    @discardableResult
    mutating func propsSent() -> UInt64 {
        propsSequence += 1
        return propsSequence
    }

    /// Whether the parent still waits for a rendering of the props last sent (`placed`: the
    /// child has a worker to answer).
    func isAwaitingRendering(placed: Bool) -> Bool {
        placed && receivedSequence < propsSequence
    }

    /// Whether a rendering computed for props `sequence` is taken: not for props never sent,
    /// and not older than one already received.
    func accepts(renderingFor sequence: UInt64) -> Bool {
        sequence <= propsSequence && sequence >= receivedSequence
    }

    /// A rendering computed for props `sequence` was received (and decoded).
    mutating func received(renderingFor sequence: UInt64) {
        receivedSequence = sequence
    }

    /// Whether a flush is waiting for the node to apply it.
    var hasStagedFlushes: Bool { stagedFlushes > 0 }

    /// A flush was handed to the node.
    mutating func flushStaged() {
        stagedFlushes += 1
    }

    /// The node applied a flush handed to it.
    mutating func flushApplied() {
        stagedFlushes = max(0, stagedFlushes - 1)
    }

    /// Shows the rendering computed for props `sequence` unless it is older than the one shown
    /// (`placed`: the child has a worker).
    mutating func install(renderingFor sequence: UInt64, placed: Bool) -> Installation {
        guard sequence >= installedSequence else { return .stale }
        let wasAwaited = installedSequence < propsSequence && placed
        installedSequence = sequence
        return wasAwaited ? .awaited : .unasked
    }
}
