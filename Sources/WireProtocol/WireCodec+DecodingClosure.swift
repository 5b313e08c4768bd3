/// `WireCodec.decode(from:through:)` for a codec without a direct way to hand out its decoder:
/// the closure travels in `userInfo` to a `Decodable` that calls it. `BinaryWireCodec` hands its
/// decoder over directly, without the dictionary this builds and searches per call.
extension WireCodec {
    package func decode(from bytes: UnsafeRawBufferPointer, through body: @escaping @Sendable (any Decoder) throws -> Void) throws(WireError) {
        var userInfo = self.userInfo
        userInfo[DecodingClosure.key] = DecodingClosure(body: body)
        _ = try with(userInfo: userInfo).decode(DecodingClosure.Call.self, from: bytes)
    }
}

/// The closure `decode(from:through:)` runs, as `userInfo` carries it.
private struct DecodingClosure: Sendable {
    static let key = CodingUserInfoKey(rawValue: "wire.decodingClosure")!
    let body: @Sendable (any Decoder) throws -> Void

    /// Decoding this type runs the closure in `userInfo` with the decoder.
    struct Call: Decodable {
        init(from decoder: any Decoder) throws {
            guard let closure = decoder.userInfo[DecodingClosure.key] as? DecodingClosure else {
                throw WireError.valueError("no decoding closure in userInfo")
            }
            try closure.body(decoder)
        }
    }
}
