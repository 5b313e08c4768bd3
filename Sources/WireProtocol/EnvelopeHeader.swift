#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Frame 0 of every message: who it is for, what it means, and how its payload is encoded.
///
/// The header is fixed-layout big-endian so it can be parsed without the codec and before any
/// payload is touched: a receiver can route, order and acknowledge a message (or reject it)
/// from 40 bytes plus the node path. Layout (docs/WIRE-PROTOCOL.md §3):
///
///     magic "WF" (2) | version (1) | kind (1) | codec (1) | flags (1)
///     correlation id (8) | sequence (8) | acknowledged (8) | epoch (8) | path length (2) | path (n)
package struct EnvelopeHeader: Sendable, Equatable {
    /// The two magic bytes `0x57 0x46` ("WF"), as a big-endian `UInt16`; rejects stray traffic.
    package static let magic: UInt16 = 0x5746
    /// The protocol version this build writes and the only one it reads.
    package static let protocolVersion: UInt8 = 2
    /// Bytes before the node path: everything but the path is fixed-size.
    package static let fixedSize = 40

    /// The kind of an encoded header frame without decoding the rest of it (`nil` when the frame
    /// is too short or names no known kind): for code that only routes or packs messages it
    /// already encoded or checked, such as a batch of held messages.
    package static func kind(ofEncoded frame: [UInt8]) -> MessageKind? {
        frame.withUnsafeBytes { kind(ofEncoded: $0) }
    }

    /// `kind(ofEncoded:)` of a borrowed frame (a message inside a received `packedBatch`).
    package static func kind(ofEncoded frame: UnsafeRawBufferPointer) -> MessageKind? {
        // magic (2), version (1), then the kind.
        frame.count > 3 ? MessageKind(rawValue: frame[3]) : nil
    }

    /// What the message means.
    package var kind: MessageKind
    /// How the payload frames are encoded.
    package var codec: CodecID
    /// Ties a reply (`rendering`, `error`, …) to the request it answers; 0 when uncorrelated.
    package var correlationID: UInt64
    /// The sender's sequence number on this link, so the receiver can order and acknowledge.
    package var sequence: UInt64
    /// Cumulative ack: every message from the peer up to this sequence arrived (0 = none yet).
    package var acknowledged: UInt64
    /// The fencing token of the addressed node's current placement (0 = none): raised by the
    /// sender of a placement each time it places the node again, so messages about an earlier
    /// placement are recognisably stale and can be dropped before any of their payload is read.
    package var epoch: UInt64
    /// The addressed node's path from the root (e.g. `EmailBrowser:/InboxWorkflow:inbox`); opaque
    /// text to this layer, bounded by `WireLimits.maxNodePathBytes`.
    package var nodePath: String

    /// Creates a header.
    package init(
        kind: MessageKind,
        codec: CodecID = .default,
        correlationID: UInt64 = 0,
        sequence: UInt64 = 0,
        acknowledged: UInt64 = 0,
        epoch: UInt64 = 0,
        nodePath: String = ""
    ) {
        self.kind = kind
        self.codec = codec
        self.correlationID = correlationID
        self.sequence = sequence
        self.acknowledged = acknowledged
        self.epoch = epoch
        self.nodePath = nodePath
    }

    /// Encodes the header frame. Throws `.lengthTooLarge` when the node path exceeds the limit,
    /// so a sender learns locally what its peer would reject.
    package func encode(limits: WireLimits = .default) throws(WireError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.fixedSize + nodePath.utf8.count)
        try encode(appendingTo: &bytes, limits: limits)
        return bytes
    }

    /// Encodes the header frame at the end of `bytes`: for a sender that assembles its messages
    /// in one reused buffer rather than one array per frame. Throws as ``encode(limits:)``,
    /// leaving `bytes` as it was.
    package func encode(appendingTo bytes: inout [UInt8], limits: WireLimits = .default) throws(WireError) {
        let pathLength = nodePath.utf8.count
        let pathLimit = min(limits.maxNodePathBytes, Int(UInt16.max))
        guard pathLength <= pathLimit else {
            throw .lengthTooLarge(declared: UInt64(pathLength), limit: pathLimit, context: "node path")
        }
        var writer = ByteWriter(taking: &bytes)
        defer { bytes = writer.bytes }
        writer.write(bigEndian: Self.magic)
        writer.write(Self.protocolVersion)
        writer.write(kind.rawValue)
        writer.write(codec.rawValue)
        writer.write(0)  // flags: none defined in v1
        writer.write(bigEndian: correlationID)
        writer.write(bigEndian: sequence)
        writer.write(bigEndian: acknowledged)
        writer.write(bigEndian: epoch)
        writer.write(bigEndian: UInt16(truncatingIfNeeded: pathLength))
        var path = nodePath
        path.withUTF8 { writer.write(UnsafeRawBufferPointer($0)) }
    }

    /// Decodes a header frame straight from borrowed bytes (e.g. a ZeroMQ message) without
    /// copying anything but the node path.
    package init(decoding frame: UnsafeRawBufferPointer, limits: WireLimits = .default) throws(WireError) {
        try self.init(decoding: frame, limits: limits, reusingPath: "")
    }

    /// Decodes a header frame whose node path is probably `knownPath` (the path of the message
    /// before it, from the same peer): when it is, that string is kept instead of a new one
    /// made from the bytes (an allocation for any path longer than 15 bytes).
    package init(decoding frame: UnsafeRawBufferPointer, limits: WireLimits = .default, reusingPath knownPath: String) throws(WireError) {
        if frame.count > limits.maxFrameBytes {
            throw .lengthTooLarge(declared: UInt64(frame.count), limit: limits.maxFrameBytes, context: "header frame")
        }
        var reader = ByteReader(frame)
        let magic = try reader.readBigEndian(UInt16.self, "header magic")
        guard magic == Self.magic else { throw .badMagic(magic) }
        let version = try reader.readByte("header version")
        guard version == Self.protocolVersion else { throw .unsupportedVersion(version) }
        let kindByte = try reader.readByte("header kind")
        guard let kind = MessageKind(rawValue: kindByte) else { throw .unknownKind(kindByte) }
        let codecByte = try reader.readByte("header codec")
        guard let codec = CodecID(rawValue: codecByte) else { throw .unknownCodec(codecByte) }
        let flags = try reader.readByte("header flags")
        guard flags == 0 else { throw .unsupportedFlags(flags) }
        let correlationID = try reader.readBigEndian(UInt64.self, "header correlation id")
        let sequence = try reader.readBigEndian(UInt64.self, "header sequence")
        let acknowledged = try reader.readBigEndian(UInt64.self, "header acknowledged")
        let epoch = try reader.readBigEndian(UInt64.self, "header epoch")
        let pathLength = Int(try reader.readBigEndian(UInt16.self, "header node path length"))
        if pathLength > limits.maxNodePathBytes {
            throw .lengthTooLarge(
                declared: UInt64(pathLength), limit: limits.maxNodePathBytes, context: "node path")
        }
        let nodePath: String
        if pathLength > 0, knownPath.utf8.count == pathLength, reader.remaining >= pathLength,
            Self.matches(knownPath, UnsafeRawBufferPointer(rebasing: frame[reader.offset..<(reader.offset + pathLength)]))
        {
            reader.offset += pathLength
            nodePath = knownPath
        } else {
            nodePath = try reader.readUTF8(pathLength, "node path")
        }
        if !reader.isAtEnd {
            throw .trailingBytes(count: reader.remaining, context: "header")
        }
        self.init(
            kind: kind, codec: codec, correlationID: correlationID, sequence: sequence,
            acknowledged: acknowledged, epoch: epoch, nodePath: nodePath)
    }

    /// Whether `path`'s UTF-8 is exactly `bytes` (of the same count, checked by the caller).
    private static func matches(_ path: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var path = path
        return path.withUTF8 { utf8 in
            guard let lhs = utf8.baseAddress, let rhs = bytes.baseAddress else { return utf8.count == bytes.count }
            return utf8.count == bytes.count && memcmp(lhs, rhs, bytes.count) == 0
        }
    }
}
