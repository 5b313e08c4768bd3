/// The encoder's per-message key table: maps key text to its index in order of first use.
///
/// Every keyed entry looks its key up here, so this is on the hottest encoding path. A small
/// open-addressing table with an FNV-1a hash over the UTF-8 bytes costs a fraction of
/// `Dictionary<String, Int>` (whose per-lookup `Hasher` seeding dominates for short keys).
struct KeyInterner {
    private var keys: [String] = []
    /// Slot → key index + 1 (0 = empty); the count is a power of two, kept at most half full.
    /// Empty until the first key: a message of a scalar (an event, an output) has no keys, and
    /// allocates no table.
    private var slots: [Int32] = []

    init() {}

    /// Forgets every key, keeping the storage (an encoder reused for another message).
    mutating func removeAll() {
        guard !keys.isEmpty else { return }
        keys.removeAll(keepingCapacity: true)
        for index in slots.indices { slots[index] = 0 }
    }

    var count: Int { keys.count }

    /// The index of `key`, or nil after adding it as the next index.
    mutating func index(of key: String) -> Int? {
        if slots.isEmpty {
            keys.reserveCapacity(16)
            slots = [Int32](repeating: 0, count: 64)
        }
        var key = key
        let hash = key.withUTF8 { utf8 -> UInt64 in
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            for byte in utf8 {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
            return hash
        }
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash ^ (hash >> 29)) & mask
        while true {
            let entry = Int(slots[slot])
            if entry == 0 { break }
            if keys[entry - 1] == key { return entry - 1 }
            slot = (slot + 1) & mask
        }
        keys.append(key)
        slots[slot] = Int32(truncatingIfNeeded: keys.count)
        if keys.count * 2 > slots.count { grow() }
        return nil
    }

    private mutating func grow() {
        let keys = self.keys
        self.keys = []
        self.keys.reserveCapacity(keys.count * 2)
        slots = [Int32](repeating: 0, count: slots.count * 2)
        for key in keys { _ = index(of: key) }
    }
}
