/// The parent role's remote children's proxies by child id, counting every walk over all of them.
///
/// A walk over every proxy costs what the parent holds (100,000 on a coordinator with as many
/// sessions), so it belongs only to rare events (a worker joins, the start's grace ends, a whole
/// inspection), never to the loop's timers. The count (`walked`) is part of what
/// `RemoteRuntime.periodicWork()` reports, so a test holding a timer check to a bound that does
/// not grow with the children also fails if a timer walks this table.
struct ProxyTable {
    private var byID: [UInt64: any AnyRemoteChildProxy] = [:]
    /// How many proxies the walks have looked at so far.
    private(set) var walked = 0

    subscript(id: UInt64) -> (any AnyRemoteChildProxy)? {
        get { byID[id] }
        set { byID[id] = newValue }
    }

    @discardableResult
    mutating func removeValue(forKey id: UInt64) -> (any AnyRemoteChildProxy)? {
        byID.removeValue(forKey: id)
    }

    /// Every proxy, counted as looked at.
    mutating func walkAll() -> Dictionary<UInt64, any AnyRemoteChildProxy>.Values {
        walked += byID.count
        return byID.values
    }
}
