/// The project's compact binary `Codable` format, and the default wire codec.
///
/// Every value is a one-byte type tag and a body: LEB128 varints for integers (zigzag for
/// signed) and lengths, big-endian IEEE 754 for floats, raw bytes for `Data`/`[UInt8]`, and
/// count-prefixed containers whose keys are interned per message (docs/WIRE-PROTOCOL.md §6).
/// Encoding streams into one growing array and decoding reads in place from borrowed bytes,
/// so a message costs a handful of allocations, far fewer than Foundation's JSON coders.
package struct BinaryWireCodec: WireCodec {
    /// `CodecID.binary`.
    package var id: CodecID { .binary }
    /// Bounds on incoming payloads (and on what this side will encode).
    package var limits: WireLimits
    /// Handed to every encoder and decoder.
    package var userInfo: [CodingUserInfoKey: any Sendable]

    /// Creates a binary codec.
    package init(limits: WireLimits = .default, userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.limits = limits
        self.userInfo = userInfo
    }

    private var anyUserInfo: [CodingUserInfoKey: Any] {
        // `Sendable` is a marker protocol: `any Sendable` and `Any` are the same type at run time
        // (the same metadata), so the dictionary is reinterpreted as it is. An `as` upcast (or
        // `mapValues`) rebuilds it: an allocation and a rehash per message.
        unsafeBitCast(userInfo, to: [CodingUserInfoKey: Any].self)
    }

    /// A scalar (an event's or an output's value, usually) is written without an encoder
    /// (`BinaryEncoder.directScalarRoot`); any other value through a new one.
    package func encode<T: Encodable>(_ value: T) throws(WireError) -> [UInt8] {
        if let bytes = try BinaryEncoder.directScalarRoot(value, limits: limits) { return bytes }
        return try BinaryEncoder(limits: limits, userInfo: anyUserInfo).encodeRoot(value)
    }

    /// Encodes with `scratch`'s encoder, reset for this message (a fresh one when it is in use
    /// or has other limits); the result is copied out at its exact size. A scalar needs no
    /// encoder (`BinaryEncoder.directScalarRoot`).
    package func encode<T: Encodable>(_ value: T, reusing scratch: WireCodingScratch) throws(WireError) -> [UInt8] {
        if let bytes = try BinaryEncoder.directScalarRoot(value, limits: limits) { return bytes }
        let encoder: BinaryEncoder
        if let reused = scratch.binaryEncoder, reused.limits == limits {
            scratch.binaryEncoder = nil
            reused.reset(userInfo: anyUserInfo)
            encoder = reused
        } else {
            encoder = BinaryEncoder(limits: limits, userInfo: anyUserInfo)
        }
        defer {
            encoder.reset(userInfo: [:])
            scratch.binaryEncoder = encoder
        }
        return try encoder.encodeRoot(value, copying: true)
    }

    /// A scalar (an event's or an output's value, usually) is read without a decoder
    /// (`decodeDirectScalar`); any other value through a new one.
    package func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws(WireError) -> T {
        if BinaryDecoder.readsDirectly(T.self) { return try decodeDirectScalar(type, from: bytes) }
        let decoder = try freshDecoder(of: bytes)
        defer { decoder.state.invalidate() }
        return try decodeRoot(with: decoder) { (decoder) throws in try decodeValue(type, with: decoder) }
    }

    /// Hands `body` the decoder itself: no `userInfo` entry to build and look up per call (the
    /// remote runtime decodes every event this way).
    package func decode(from bytes: UnsafeRawBufferPointer, through body: @escaping @Sendable (any Decoder) throws -> Void) throws(WireError) {
        let decoder = try freshDecoder(of: bytes)
        defer { decoder.state.invalidate() }
        try decode(with: decoder, through: body)
    }

    /// `decode(from:through:)` with `scratch`'s decoder (`decoder(of:reusing:)`).
    package func decode(
        from bytes: UnsafeRawBufferPointer, through body: @escaping @Sendable (any Decoder) throws -> Void, reusing scratch: WireCodingScratch
    ) throws(WireError) {
        let decoder = try self.decoder(of: bytes, reusing: scratch)
        defer { giveBack(decoder, to: scratch) }
        try decode(with: decoder, through: body)
    }

    /// Runs `body` with the root `decoder`; the value it reads must be the whole payload.
    private func decode(with decoder: BinaryDecoder, through body: (any Decoder) throws -> Void) throws(WireError) {
        try decodeRoot(with: decoder) { (decoder) throws in
            try body(decoder)
            return ((), try decoder.end(ofValueAt: 0))
        }
    }

    /// Decodes with `scratch`'s decoder (`decoder(of:reusing:)`); a scalar needs none
    /// (`decodeDirectScalar`).
    package func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer, reusing scratch: WireCodingScratch) throws(WireError) -> T {
        if BinaryDecoder.readsDirectly(T.self) { return try decodeDirectScalar(type, from: bytes) }
        let decoder = try self.decoder(of: bytes, reusing: scratch)
        defer { giveBack(decoder, to: scratch) }
        return try decodeRoot(with: decoder) { (decoder) throws in try decodeValue(type, with: decoder) }
    }

    /// `scratch`'s decoder with its state, reset for `bytes` (a fresh one when it is in use or
    /// has other limits); `giveBack(_:to:)` returns it once the message is decoded.
    private func decoder(of bytes: UnsafeRawBufferPointer, reusing scratch: WireCodingScratch) throws(WireError) -> BinaryDecoder {
        guard let reused = scratch.binaryDecoder, reused.limits == limits else { return try freshDecoder(of: bytes) }
        try checkSize(of: bytes)
        scratch.binaryDecoder = nil
        reused.state.reset(bytes: bytes, userInfo: anyUserInfo)
        reused.reset()
        return reused
    }

    /// Keeps `decoder` in `scratch` for the next message: invalidated (a container kept past the
    /// decode fails cleanly), its references to this message's bytes and context dropped.
    private func giveBack(_ decoder: BinaryDecoder, to scratch: WireCodingScratch) {
        decoder.state.reset(bytes: UnsafeRawBufferPointer(start: nil, count: 0), userInfo: [:])
        decoder.state.invalidate()
        scratch.binaryDecoder = decoder
    }

    /// A whole payload holding one scalar of a type `BinaryDecoder.readsDirectly` accepts, read
    /// in place without a decoder: the same value, and the same errors, as through one.
    private func decodeDirectScalar<T>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws(WireError) -> T {
        try checkSize(of: bytes)
        var reader = ByteReader(bytes)
        let value = try BinaryDecoder.readDirectScalar(type, from: &reader, limits: limits)
        guard reader.isAtEnd else { throw .trailingBytes(count: reader.remaining, context: "binary payload") }
        return value
    }

    private func checkSize(of bytes: UnsafeRawBufferPointer) throws(WireError) {
        guard bytes.count <= limits.maxFrameBytes else {
            throw .lengthTooLarge(declared: UInt64(bytes.count), limit: limits.maxFrameBytes, context: "binary payload")
        }
    }

    /// A root decoder of `bytes` made for this one message; the caller invalidates its state
    /// when the message is done (a container kept past the decode then fails cleanly).
    private func freshDecoder(of bytes: UnsafeRawBufferPointer) throws(WireError) -> BinaryDecoder {
        try checkSize(of: bytes)
        let state = BinaryDecodingState(bytes: bytes, limits: limits, userInfo: anyUserInfo)
        return BinaryDecoder(state: state, position: 0, codingPath: [], depth: 0)
    }

    /// The root value decoded as a `T`, with the offset after it.
    private func decodeValue<T: Decodable>(_ type: T.Type, with decoder: BinaryDecoder) throws -> (T, Int) {
        var end = 0
        let value = try decoder.decodeValue(type, at: 0, key: nil, end: &end)
        return (value, end)
    }

    /// Runs `body` with a root `decoder` at offset 0 (fresh or reset from a scratch); `body`
    /// returns its result and the offset after the value, which must be the end of the payload.
    private func decodeRoot<Result>(
        with decoder: BinaryDecoder, _ body: (BinaryDecoder) throws -> (Result, Int)
    ) throws(WireError) -> Result {
        let state = decoder.state
        let byteCount = state.byteCount
        do {
            let (value, end) = try body(decoder)
            if let deferred = state.deferredError { throw deferred }
            if end != byteCount {
                throw WireError.trailingBytes(count: byteCount - end, context: "binary payload")
            }
            return value
        } catch {
            throw state.deferredError ?? wireError(from: error)
        }
    }
}
