/// Turns `Codable` values into payload frames and back.
///
/// Two implementations share this shape so a peer's announced codec can be selected at run time
/// (`WireCodecs.codec(for:)`): the compact binary codec for production, JSON for debugging.
/// Errors are always `WireError`, whatever the value's own `Codable` code threw, so the transport
/// has one error type to log and reply with.
package protocol WireCodec: Sendable {
    /// The id written into the header of messages this codec encoded.
    var id: CodecID { get }
    /// Values handed to every encoder and decoder's `userInfo` (the remote runtime attaches its
    /// sink exporter/importer here so decoded sinks can call back across the wire).
    var userInfo: [CodingUserInfoKey: any Sendable] { get set }
    /// Encodes `value` as one payload frame.
    func encode<T: Encodable>(_ value: T) throws(WireError) -> [UInt8]
    /// Decodes a `T` from one payload frame, borrowing the bytes (no copy).
    func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws(WireError) -> T
    /// Decodes one payload frame through `body`, which gets the decoder of the frame's value:
    /// for a consumer that holds a decoding closure rather than a `Decodable` type (the remote
    /// runtime delivers each event to its sink's closure this way). A default implementation
    /// (`WireCodec+DecodingClosure.swift`) passes the closure through `userInfo`.
    func decode(from bytes: UnsafeRawBufferPointer, through body: @escaping @Sendable (any Decoder) throws -> Void) throws(WireError)
    /// Encodes `value` as ``encode(_:)`` does, reusing `scratch`'s coder storage
    /// (``WireCodingScratch``) instead of making a coder for this one message.
    func encode<T: Encodable>(_ value: T, reusing scratch: WireCodingScratch) throws(WireError) -> [UInt8]
    /// Decodes as ``decode(_:from:)`` does, reusing `scratch`'s coder storage
    /// (``WireCodingScratch``) instead of making a decoder for this one message.
    func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer, reusing scratch: WireCodingScratch) throws(WireError) -> T
    /// Decodes as ``decode(from:through:)`` does, reusing `scratch`'s coder storage
    /// (``WireCodingScratch``): a worker decodes every event this way.
    func decode(
        from bytes: UnsafeRawBufferPointer, through body: @escaping @Sendable (any Decoder) throws -> Void, reusing scratch: WireCodingScratch
    ) throws(WireError)
}

extension WireCodec {
    /// Without reusable coder state: encodes as ``encode(_:)`` does.
    package func encode<T: Encodable>(_ value: T, reusing scratch: WireCodingScratch) throws(WireError) -> [UInt8] {
        try encode(value)
    }

    /// Without reusable coder state: decodes as ``decode(_:from:)`` does.
    package func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer, reusing scratch: WireCodingScratch) throws(WireError) -> T {
        try decode(type, from: bytes)
    }

    /// Without reusable coder state: decodes as ``decode(from:through:)`` does.
    package func decode(
        from bytes: UnsafeRawBufferPointer, through body: @escaping @Sendable (any Decoder) throws -> Void, reusing scratch: WireCodingScratch
    ) throws(WireError) {
        try decode(from: bytes, through: body)
    }

    /// Decodes a `T` from an owned payload frame.
    package func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws(WireError) -> T {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(WireError) -> T in try decode(type, from: raw) }
        }
        return try result.get()
    }

    /// A copy of this codec with `userInfo` replaced.
    package func with(userInfo: [CodingUserInfoKey: any Sendable]) -> Self {
        var copy = self
        copy.userInfo = userInfo
        return copy
    }
}

/// Selecting codecs by id.
package enum WireCodecs {
    /// The codec peers use unless they announce otherwise (binary).
    package static let `default`: any WireCodec = BinaryWireCodec()

    /// The codec a peer announced (in its `hello`) or a header names.
    package static func codec(
        for id: CodecID,
        limits: WireLimits = .default,
        userInfo: [CodingUserInfoKey: any Sendable] = [:]
    ) -> any WireCodec {
        switch id {
        case .binary: BinaryWireCodec(limits: limits, userInfo: userInfo)
        case .json: JSONWireCodec(limits: limits, userInfo: userInfo)
        }
    }
}

/// Renders a coding path as `a.b[2].c` for error messages.
func renderCodingPath(_ path: [any CodingKey]) -> String {
    var result = ""
    for key in path {
        if let index = key.intValue, key.stringValue == "Index \(index)" || key.stringValue == "\(index)" {
            result += "[\(index)]"
        } else {
            if !result.isEmpty { result += "." }
            result += key.stringValue
        }
    }
    return result
}

/// Maps whatever a `Codable` implementation threw to a `WireError`.
func wireError(from error: any Error) -> WireError {
    if let error = error as? WireError { return error }
    if let error = error as? DecodingError {
        switch error {
        case let .typeMismatch(type, context):
            return .typeMismatch(
                expected: "\(type)", found: context.debugDescription,
                codingPath: renderCodingPath(context.codingPath))
        case let .valueNotFound(type, context):
            return .typeMismatch(
                expected: "\(type)", found: "nil", codingPath: renderCodingPath(context.codingPath))
        case let .keyNotFound(key, context):
            return .keyNotFound(key: key.stringValue, codingPath: renderCodingPath(context.codingPath))
        case let .dataCorrupted(context):
            return .dataCorrupted(context.debugDescription, codingPath: renderCodingPath(context.codingPath))
        @unknown default:
            return .valueError(String(describing: error))
        }
    }
    if let error = error as? EncodingError {
        switch error {
        case let .invalidValue(_, context):
            return .encodingFailed(context.debugDescription, codingPath: renderCodingPath(context.codingPath))
        @unknown default:
            return .valueError(String(describing: error))
        }
    }
    return .valueError(String(describing: error))
}
