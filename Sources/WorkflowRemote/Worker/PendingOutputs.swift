/// A hosted child's outputs waiting for the next flush, each with the event that caused it,
/// packed as the OUTPUTS message carries them.
struct PendingOutputs {
    let path: String
    var values = PackedValues()
    var causes: [UInt64] = []
    var ordinals: [UInt32] = []

    init(path: String) {
        self.path = path
    }

    mutating func append(_ bytes: [UInt8], cause: UInt64, ordinal: UInt32) {
        values.append(bytes)
        causes.append(cause)
        ordinals.append(ordinal)
    }
}
