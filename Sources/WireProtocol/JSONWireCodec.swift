import Foundation

/// Foundation JSON as a wire codec: several times larger and slower than `BinaryWireCodec`, but
/// a human can read it in a packet capture or log, which is worth it while debugging a cluster.
///
/// Dates are seconds since the reference date and `Data` is base64 (Foundation's defaults), so
/// any `Codable` value round-trips as it does through `JSONEncoder`; non-finite floats are
/// spelled `"inf"`, `"-inf"` and `"nan"` so they round-trip too.
package struct JSONWireCodec: WireCodec {
    /// `CodecID.json`.
    package var id: CodecID { .json }
    /// Bounds applied to incoming frames.
    package var limits: WireLimits
    /// Handed to every `JSONEncoder`/`JSONDecoder`.
    package var userInfo: [CodingUserInfoKey: any Sendable]

    /// Creates a JSON codec.
    package init(limits: WireLimits = .default, userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.limits = limits
        self.userInfo = userInfo
    }

    package func encode<T: Encodable>(_ value: T) throws(WireError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        encoder.userInfo = userInfo
        do {
            return Array(try encoder.encode(value))
        } catch {
            throw wireError(from: error)
        }
    }

    package func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws(WireError) -> T {
        guard bytes.count <= limits.maxFrameBytes else {
            throw .lengthTooLarge(declared: UInt64(bytes.count), limit: limits.maxFrameBytes, context: "JSON payload")
        }
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        decoder.userInfo = userInfo
        do {
            return try decoder.decode(type, from: Data(bytes))
        } catch {
            throw wireError(from: error)
        }
    }
}
