/// Appends wire primitives to one growing byte array.
///
/// Encoding writes everything into a single `[UInt8]` so a message costs one (amortised)
/// allocation, not one per value. Integers in headers are big-endian (network order); integers
/// in binary payloads are LEB128 varints (zigzag for signed) so small numbers take one byte.
struct ByteWriter {
    var bytes: [UInt8]

    init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Continues writing at the end of `storage`, which is left empty until the writer's
    /// `bytes` are handed back (no copy: the storage moves).
    init(taking storage: inout [UInt8]) {
        bytes = []
        swap(&bytes, &storage)
    }

    var count: Int { bytes.count }

    mutating func write(_ byte: UInt8) {
        bytes.append(byte)
    }

    mutating func write(bigEndian value: some FixedWidthInteger) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func write(_ raw: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: raw)
    }

    mutating func write(contentsOf array: [UInt8]) {
        bytes.append(contentsOf: array)
    }

    /// Writes `value` as unsigned LEB128: 7 bits per byte, low group first, high bit = "more".
    mutating func writeVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    /// Writes a 128-bit unsigned LEB128 (same format, up to 19 bytes).
    mutating func writeVarint(_ value: UInt128) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    /// Writes a length-prefixed UTF-8 string (varint byte count, then the bytes).
    mutating func writeString(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            writeVarint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    /// Replaces the one-byte placeholder at `position` with the varint for `value`, growing the
    /// array when the varint needs more than one byte. Only bytes after `position` move, so the
    /// caller must own everything after it (a container being closed does).
    mutating func patchVarint(_ value: Int, at position: Int) {
        if value < 0x80 {
            bytes[position] = UInt8(truncatingIfNeeded: value)
            return
        }
        var encoded: [UInt8] = []
        var rest = UInt64(value)
        while rest >= 0x80 {
            encoded.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        encoded.append(UInt8(truncatingIfNeeded: rest))
        bytes.replaceSubrange(position..<(position + 1), with: encoded)
    }
}

/// Zigzag-maps a signed integer so small magnitudes of either sign become small varints.
@inline(__always)
func zigzag(_ value: Int64) -> UInt64 {
    UInt64(bitPattern: (value << 1) ^ (value >> 63))
}

/// Inverse of `zigzag(_:)`.
@inline(__always)
func unzigzag(_ value: UInt64) -> Int64 {
    Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
}

/// 128-bit zigzag.
@inline(__always)
func zigzag(_ value: Int128) -> UInt128 {
    UInt128(bitPattern: (value << 1) ^ (value >> 127))
}

/// 128-bit inverse zigzag.
@inline(__always)
func unzigzag(_ value: UInt128) -> Int128 {
    Int128(bitPattern: value >> 1) ^ (0 - Int128(bitPattern: value & 1))
}
