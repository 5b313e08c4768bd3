/// Which codec encoded a message's payload frames; carried in every header.
///
/// The byte lets a receiver decode a message without out-of-band state, and lets a peer that
/// announced JSON in its `hello` (for debugging) interoperate with binary peers.
package enum CodecID: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// The project's compact binary Codable format (`BinaryWireCodec`), the default.
    case binary = 0
    /// Foundation JSON (`JSONWireCodec`): larger and slower, but readable in a packet capture.
    case json = 1

    /// The codec peers use unless configured otherwise.
    package static let `default`: CodecID = .binary

    package var description: String {
        switch self {
        case .binary: "binary"
        case .json: "json"
        }
    }
}
