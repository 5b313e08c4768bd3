/// A running hash of what a simulation did, step by step: the clock, which role took the step,
/// how many random draws the run had made (each message sent, fault and delay draws some, so the
/// count follows every branch the run took), the messages in flight and the counts of what was
/// applied, moved and fenced. Two runs of one seed must end with the same hash (madsim's check):
/// anything the run reads besides its seed — the wall clock, a global, an address, the order of
/// a dictionary keyed by such — makes them differ, and a seed that did not replay would hide the
/// bug it found.
struct SimulationTrace: Equatable, CustomStringConvertible {
    /// FNV-1a, 64 bits: cheap per step, and any change of any mixed value changes the hash.
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func mix(_ word: UInt64) {
        var word = word
        for _ in 0..<8 {
            value = (value ^ (word & 0xff)) &* 0x0000_0100_0000_01b3
            word >>= 8
        }
    }

    mutating func mix(_ number: Int) { mix(UInt64(bitPattern: Int64(number))) }

    mutating func mix(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        mix(UInt64(bitPattern: seconds))
        mix(UInt64(bitPattern: attoseconds))
    }

    var description: String { String(value, radix: 16) }
}
