/// A running hash of what a coordinator simulation did: after each step its virtual time and
/// the generator's position (which moves with every draw, so it follows every branch taken),
/// and what the drivers note (sessions created, events accepted). Two runs of one seed must end
/// with the same hash: a run that read anything besides its seed (the wall clock, the order of
/// a dictionary) would not replay the bug its seed found.
struct CoordinatorTrace: Equatable, CustomStringConvertible {
    /// FNV-1a over the words' bytes, 64 bits.
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func mix(_ word: Int) {
        withUnsafeBytes(of: UInt64(bitPattern: Int64(word)).littleEndian) { bytes in
            for byte in bytes { value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        }
    }

    mutating func mix(_ duration: Duration) {
        mix(Int(truncatingIfNeeded: duration.components.seconds))
        mix(Int(truncatingIfNeeded: duration.components.attoseconds))
    }

    var description: String { String(value, radix: 16) }
}
