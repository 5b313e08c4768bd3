/// One worker of the cluster as the configuration file lists it.
///
/// A worker announces its name, pool and capacity in HELLO; the placement table refers to the
/// name (`worker`) or the pool (`pool`), so the two must match what the file says.
public struct WorkerEntry: Sendable, Equatable {
    /// The worker's unique name (also its process label on screens).
    public var name: String
    /// The pool it announces.
    public var pool: String
    /// How many children it accepts.
    public var capacity: Int

    /// Creates an entry.
    public init(name: String, pool: String = "default", capacity: Int = 10_000) {
        self.name = name
        self.pool = pool
        self.capacity = capacity
    }
}
