/// Why the coordinator's store could not do what was asked, in words an operator can act on.
package enum CoordinatorStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The store cannot be opened or prepared (a bad path, a file that is not a database, no
    /// permission): a configuration error at start.
    case cannotOpen(store: String, reason: String)
    /// A newer writer holds the store: this writer's token is stale and its write was refused.
    case fenced(store: String, offered: FencingToken, current: FencingToken)
    /// A read or write failed (disk full, I/O error, a lost connection).
    case failed(store: String, operation: String, reason: String)
    /// The stored data cannot be read back as a checkpoint.
    case corrupt(store: String, reason: String)
    /// A coordinator of a later release migrated the store's tables to schema version `found`
    /// while this one was running, and this one writes at most version `writes`: its write was
    /// refused (nothing was written), since it would leave out what the later layout holds.
    case schemaMigrated(store: String, found: Int, writes: Int)

    /// A one-line message naming the store.
    package var description: String {
        switch self {
        case .cannotOpen(let store, let reason): "cannot open the store \(store): \(reason)"
        case .fenced(let store, let offered, let current):
            "store \(store): a newer coordinator holds it (fencing token \(current)); this one's writes (token \(offered)) are refused"
        case .failed(let store, let operation, let reason): "store \(store): \(operation) failed: \(reason)"
        case .corrupt(let store, let reason): "store \(store): unreadable checkpoint: \(reason)"
        case .schemaMigrated(let store, let found, let writes):
            "store \(store): a coordinator of a later release has migrated its schema to version \(found), and this coordinator writes version \(writes) at most: its write was refused, nothing was written; run that release (a store is never migrated back)"
        }
    }
}
