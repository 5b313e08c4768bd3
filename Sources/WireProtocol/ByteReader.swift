#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads wire primitives from borrowed bytes with a cursor, never trapping.
///
/// Every read checks the bytes actually present first and throws `WireError` instead of reading
/// out of bounds, so untrusted input can at worst be rejected. The reader borrows the buffer
/// (no copy), which is what lets payloads be decoded straight out of a ZeroMQ message.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset: Int

    init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset >= bytes.count }

    @inline(__always)
    func require(_ count: Int, _ context: StaticString) throws(WireError) {
        if count > remaining {
            throw .truncated(expected: count, available: max(remaining, 0), context: "\(context)")
        }
    }

    @inline(__always)
    mutating func readByte(_ context: StaticString) throws(WireError) -> UInt8 {
        guard offset < bytes.count else {
            throw .truncated(expected: 1, available: 0, context: "\(context)")
        }
        let byte = bytes[offset]
        offset += 1
        return byte
    }

    @inline(__always)
    func peekByte() -> UInt8? {
        offset < bytes.count ? bytes[offset] : nil
    }

    mutating func readBigEndian<T: FixedWidthInteger>(_: T.Type, _ context: StaticString) throws(WireError) -> T {
        let size = MemoryLayout<T>.size
        try require(size, context)
        let value = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += size
        return T(bigEndian: value)
    }

    /// Reads `count` bytes without copying them.
    mutating func readSlice(_ count: Int, _ context: StaticString) throws(WireError) -> UnsafeRawBufferPointer {
        try require(count, context)
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
        offset += count
        return slice
    }

    /// Reads an unsigned LEB128 varint of at most 64 bits (10 bytes).
    @inline(__always)
    mutating func readVarint(_ context: StaticString) throws(WireError) -> UInt64 {
        if offset < bytes.count {
            let first = bytes[offset]
            if first < 0x80 {
                offset += 1
                return UInt64(first)
            }
        }
        return try readVarintSlow(context)
    }

    private mutating func readVarintSlow(_ context: StaticString) throws(WireError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        for index in 0..<10 {
            let byte = try readByte(context)
            if index == 9 && byte > 1 {
                throw .malformed("varint overflows 64 bits in \(context)", codingPath: "")
            }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
        throw .malformed("varint longer than 10 bytes in \(context)", codingPath: "")
    }

    /// Reads an unsigned LEB128 varint of at most 128 bits (19 bytes).
    mutating func readVarint128(_ context: StaticString) throws(WireError) -> UInt128 {
        var result: UInt128 = 0
        var shift: UInt128 = 0
        for index in 0..<19 {
            let byte = try readByte(context)
            if index == 18 && byte > 3 {
                throw .malformed("varint overflows 128 bits in \(context)", codingPath: "")
            }
            result |= UInt128(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
        throw .malformed("varint longer than 19 bytes in \(context)", codingPath: "")
    }

    /// Reads a varint length or count, checking it against `limit` and then against the bytes
    /// present (each counted item needs at least `minimumItemBytes`) before anyone allocates.
    mutating func readLength(limit: Int, minimumItemBytes: Int = 1, _ context: StaticString) throws(WireError) -> Int {
        let declared = try readVarint(context)
        if declared > UInt64(limit) {
            throw .lengthTooLarge(declared: declared, limit: limit, context: "\(context)")
        }
        let length = Int(declared)
        let (needed, overflow) = length.multipliedReportingOverflow(by: minimumItemBytes)
        if overflow || needed > remaining {
            throw .truncated(
                expected: overflow ? Int.max : needed, available: max(remaining, 0), context: "\(context)")
        }
        return length
    }

    /// Reads `count` bytes as UTF-8 text, rejecting invalid encodings.
    mutating func readUTF8(_ count: Int, _ context: StaticString) throws(WireError) -> String {
        let slice = try readSlice(count, context)
        let bytes = slice.assumingMemoryBound(to: UInt8.self)
        // `String(decoding:)` is the stdlib's fast path; it repairs invalid input with U+FFFD,
        // so the result equals the input bytes exactly when they were valid UTF-8.
        var string = String(decoding: bytes, as: UTF8.self)
        let valid = string.withUTF8 { decoded -> Bool in
            guard decoded.count == bytes.count else { return false }
            guard let lhs = decoded.baseAddress, let rhs = bytes.baseAddress else { return true }
            return memcmp(lhs, rhs, bytes.count) == 0
        }
        guard valid else { throw .invalidUTF8(context: "\(context)") }
        return string
    }
}
