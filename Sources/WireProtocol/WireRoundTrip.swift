/// Encodes `value` with `codec` and decodes it back: the unit of work a codec benchmark times.
///
/// It exists so a benchmark target can measure the full encode+decode cost of a payload through
/// either codec with the same code path the transport uses. Returns the decoded value (so the
/// work cannot be optimised away) and the encoded size in bytes.
package func wireRoundTrip<T: Codable>(_ value: T, through codec: some WireCodec) throws(WireError) -> (value: T, byteCount: Int) {
    let bytes = try codec.encode(value)
    return (try codec.decode(T.self, from: bytes), bytes.count)
}
