/// Coder storage that one thread keeps and reuses from message to message.
///
/// Every `encode` and `decode` of ``BinaryWireCodec`` otherwise makes its coder afresh: an
/// encoder object with its byte buffer, container stack and key table, or a decoder's state with
/// its key tables, several allocations per message before any value is coded. A loop that codes
/// message after message (a remote runtime's) keeps one of these and passes it to
/// ``WireCodec/encode(_:reusing:)``, ``WireCodec/decode(_:from:reusing:)`` and
/// ``WireCodec/decode(from:through:reusing:)``: the coder is reset instead of made, and only the
/// result is allocated. (A scalar message needs no coder at all.) Not `Sendable`: it belongs to the
/// thread that made it. A nested use (a value's own `encode(to:)` coding another message with
/// the same scratch) gets fresh storage, as without one. A decoder or container that a value's
/// `init(from:)` keeps past its return fails when used, as without a scratch, until the scratch
/// decodes the next message; it must not be kept at all. Codecs without reusable state (JSON)
/// ignore it.
package final class WireCodingScratch {
    /// The binary encoder last used, reset for the next message; `nil` while one is in use.
    var binaryEncoder: BinaryEncoder?
    /// The binary decoder (with its state) last used, reset for the next message; `nil` while
    /// one is in use.
    var binaryDecoder: BinaryDecoder?

    /// Empty storage: the first message fills it.
    package init() {}
}
