/// The project's compact binary `Codable` format, and the default wire codec.
///
/// Every value is a one-byte type tag and a body: LEB128 varints for integers (zigzag for
/// signed) and lengths, big-endian IEEE 754 for floats, raw bytes for `Data`/`[UInt8]`, and
/// count-prefixed containers whose keys are interned per message (docs/WIRE-PROTOCOL.md §6).
/// Encoding streams into one growing array and decoding reads in place from borrowed bytes,
/// so a message costs a handful of allocations, far fewer than Foundation's JSON coders.
public struct BinaryWireCodec: WireCodec {
    /// `CodecID.binary`.
    public var id: CodecID { .binary }
    /// Bounds on incoming payloads (and on what this side will encode).
    public var limits: WireLimits
    /// Handed to every encoder and decoder.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    /// Creates a binary codec.
    public init(limits: WireLimits = .default, userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.limits = limits
        self.userInfo = userInfo
    }

    public func encode<T: Encodable>(_ value: T) throws(WireError) -> [UInt8] {
        try BinaryEncoder(limits: limits, userInfo: userInfo).encodeRoot(value)
    }

    public func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws(WireError) -> T {
        try withRootDecoder(of: bytes) { (decoder) throws in
            var end = 0
            let value = try decoder.decodeValue(type, at: 0, key: nil, end: &end)
            return (value, end)
        }
    }

    /// Hands `body` the decoder itself: no `userInfo` entry to build and look up per call (the
    /// remote runtime decodes every event this way).
    public func decode(from bytes: UnsafeRawBufferPointer, through body: @escaping @Sendable (any Decoder) throws -> Void) throws(WireError) {
        try withRootDecoder(of: bytes) { (decoder) throws in
            try body(decoder)
            return ((), try decoder.end(ofValueAt: 0))
        }
    }

    /// Runs `body` with the decoder of `bytes`' root value; `body` returns its result and the
    /// offset after the value, which must be the end of the payload.
    private func withRootDecoder<Result>(
        of bytes: UnsafeRawBufferPointer, _ body: (BinaryDecoder) throws -> (Result, Int)
    ) throws(WireError) -> Result {
        guard bytes.count <= limits.maxFrameBytes else {
            throw .lengthTooLarge(declared: UInt64(bytes.count), limit: limits.maxFrameBytes, context: "binary payload")
        }
        let state = BinaryDecodingState(bytes: bytes, limits: limits, userInfo: userInfo)
        defer { state.invalidate() }
        let decoder = BinaryDecoder(state: state, position: 0, codingPath: [], depth: 0)
        do {
            let (value, end) = try body(decoder)
            if let deferred = state.deferredError { throw deferred }
            if end != bytes.count {
                throw WireError.trailingBytes(count: bytes.count - end, context: "binary payload")
            }
            return value
        } catch {
            throw state.deferredError ?? wireError(from: error)
        }
    }
}
