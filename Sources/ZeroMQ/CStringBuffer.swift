/// Decodes a NUL-terminated C buffer that libzmq filled in, stopping at the first NUL
/// (or at the end of the buffer if libzmq left none).
func decodeCString(_ buffer: [CChar]) -> String {
    let end = buffer.firstIndex(of: 0) ?? buffer.endIndex
    return String(decoding: buffer[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
