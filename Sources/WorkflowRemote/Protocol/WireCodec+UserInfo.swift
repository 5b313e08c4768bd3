import WireProtocol

extension WireCodec {
    /// Encodes with `userInfo` in the encoder (the sink exporter, for renderings and outputs).
    func encode<T: Encodable>(_ value: T, userInfo: [CodingUserInfoKey: any Sendable]) throws(WireError) -> [UInt8] {
        if userInfo.isEmpty { return try encode(value) }
        return try with(userInfo: userInfo).encode(value)
    }

    /// Decodes with `userInfo` in the decoder (the sink importer, or an event delivery).
    func decode<T: Decodable>(
        _ type: T.Type, from bytes: UnsafeRawBufferPointer, userInfo: [CodingUserInfoKey: any Sendable]
    ) throws(WireError) -> T {
        if userInfo.isEmpty { return try decode(type, from: bytes) }
        return try with(userInfo: userInfo).decode(type, from: bytes)
    }
}
