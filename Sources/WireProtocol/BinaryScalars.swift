/// Reading tagged scalar values, shared by all binary decoding containers.
///
/// Each read checks the tag first, so asking for the wrong type is a `.typeMismatch` (with the
/// coding path filled in by the container), and range-checks integers, so a value too big for
/// the requested type is a `.valueOutOfRange`, never a trap.
extension ByteReader {
    private func mismatch(_ expected: String, _ tag: UInt8) -> WireError {
        .typeMismatch(expected: expected, found: BinaryTag.name(tag), codingPath: "")
    }

    /// True (and consumed) when the next value is `nil`.
    mutating func readNilIfPresent() throws(WireError) -> Bool {
        guard let tag = peekByte() else {
            throw .truncated(expected: 1, available: 0, context: "value tag")
        }
        if tag == BinaryTag.null.rawValue {
            offset += 1
            return true
        }
        return false
    }

    mutating func readBool() throws(WireError) -> Bool {
        let tag = try readByte("value tag")
        switch tag {
        case BinaryTag.true.rawValue: return true
        case BinaryTag.false.rawValue: return false
        default: throw mismatch("Bool", tag)
        }
    }

    mutating func readString(limits: WireLimits) throws(WireError) -> String {
        let tag = try readByte("value tag")
        guard tag == BinaryTag.string.rawValue else { throw mismatch("String", tag) }
        let length = try readLength(limit: limits.maxFrameBytes, "string length")
        return try readUTF8(length, "string")
    }

    /// The body of a `bytes` value, borrowed.
    mutating func readBytes(limits: WireLimits) throws(WireError) -> UnsafeRawBufferPointer {
        let tag = try readByte("value tag")
        guard tag == BinaryTag.bytes.rawValue else { throw mismatch("bytes", tag) }
        let length = try readLength(limit: limits.maxFrameBytes, "bytes length")
        return try readSlice(length, "bytes")
    }

    mutating func readDouble() throws(WireError) -> Double {
        let tag = try readByte("value tag")
        switch tag {
        case BinaryTag.float64.rawValue:
            return Double(bitPattern: try readBigEndian(UInt64.self, "Double"))
        case BinaryTag.float32.rawValue:
            return Double(Float(bitPattern: try readBigEndian(UInt32.self, "Float")))
        default:
            throw mismatch("Double", tag)
        }
    }

    mutating func readFloat() throws(WireError) -> Float {
        let tag = try readByte("value tag")
        switch tag {
        case BinaryTag.float32.rawValue:
            return Float(bitPattern: try readBigEndian(UInt32.self, "Float"))
        case BinaryTag.float64.rawValue:
            let double = Double(bitPattern: try readBigEndian(UInt64.self, "Double"))
            let float = Float(double)
            if float.isInfinite && double.isFinite {
                throw .valueOutOfRange("\(double) does not fit in Float", codingPath: "")
            }
            return float
        default:
            throw mismatch("Float", tag)
        }
    }

    /// A varint of at most 9 bytes (63 bits: every `Int`, every sequence number) read in 64-bit
    /// arithmetic, or `nil` with nothing consumed (longer, or cut short): the 128-bit read then
    /// takes it, and reports what is wrong with it.
    @inline(__always)
    private mutating func readShortVarint() -> UInt64? {
        var result: UInt64 = 0
        var index = offset
        var shift: UInt64 = 0
        while index < bytes.count, shift < 63 {
            let byte = bytes[index]
            result |= UInt64(byte & 0x7F) << shift
            index += 1
            if byte < 0x80 {
                offset = index
                return result
            }
            shift += 7
        }
        return nil
    }

    /// Reads any integer as `T`, accepting either signedness when the value fits.
    mutating func readInteger<T: FixedWidthInteger>(_: T.Type) throws(WireError) -> T {
        let tag = try readByte("value tag")
        switch tag {
        case BinaryTag.unsigned.rawValue:
            if let byte = peekByte(), byte < 0x80 {
                offset += 1
                return T(truncatingIfNeeded: byte)  // 0…127 fits every integer type
            }
            if let magnitude = readShortVarint() {
                guard let value = T(exactly: magnitude) else {
                    throw .valueOutOfRange("\(magnitude) does not fit in \(T.self)", codingPath: "")
                }
                return value
            }
            let magnitude = try readVarint128("unsigned integer")
            guard let value = T(exactly: magnitude) else {
                throw .valueOutOfRange("\(magnitude) does not fit in \(T.self)", codingPath: "")
            }
            return value
        case BinaryTag.signed.rawValue:
            if let byte = peekByte(), byte < 0x80 {
                offset += 1
                let value = unzigzag(UInt64(byte))  // -64…63
                guard let result = T(exactly: value) else {
                    throw .valueOutOfRange("\(value) does not fit in \(T.self)", codingPath: "")
                }
                return result
            }
            if let zigzagged = readShortVarint() {
                let value = unzigzag(zigzagged)
                guard let result = T(exactly: value) else {
                    throw .valueOutOfRange("\(value) does not fit in \(T.self)", codingPath: "")
                }
                return result
            }
            let value = unzigzag(try readVarint128("signed integer"))
            guard let result = T(exactly: value) else {
                throw .valueOutOfRange("\(value) does not fit in \(T.self)", codingPath: "")
            }
            return result
        default:
            throw mismatch("\(T.self)", tag)
        }
    }
}

/// Writing tagged scalar values: the encoder's single values, and a root scalar written without
/// an encoder (`BinaryEncoder.directScalarRoot`).
extension ByteWriter {
    mutating func writeTagged(_ value: Bool) { write(value ? BinaryTag.true.rawValue : BinaryTag.false.rawValue) }

    mutating func writeTagged(_ value: String) {
        write(BinaryTag.string.rawValue)
        writeString(value)
    }

    mutating func writeTagged(_ value: Double) {
        write(BinaryTag.float64.rawValue)
        write(bigEndian: value.bitPattern)
    }

    mutating func writeTagged(signed value: Int64) {
        write(BinaryTag.signed.rawValue)
        writeVarint(zigzag(value))
    }

    mutating func writeTagged(unsigned value: UInt64) {
        write(BinaryTag.unsigned.rawValue)
        writeVarint(value)
    }

    mutating func writeTagged(bytes raw: UnsafeRawBufferPointer) {
        write(BinaryTag.bytes.rawValue)
        writeVarint(UInt64(raw.count))
        write(raw)
    }

    /// Writes `value` if its type is one with a direct representation (`String`, `Int`,
    /// `Double`, `Bool`, `UInt64`, `Int64`); returns false for every other type, having written
    /// and reserved nothing. With `reservingFirst`, room for the whole value is reserved before
    /// it is written (an empty writer then allocates once, at the value's size).
    ///
    /// The type is compared first and the value then taken as that type with `_identityCast`
    /// (no dynamic cast, no `Optional<T>` metadata looked up as an `as? T` needs: in generic
    /// code both cost more than writing the value).
    mutating func writeDirectScalar<T>(_ value: T, reservingFirst: Bool) -> Bool {
        // A tag, and a varint of up to 10 bytes or a Double's 8.
        let scalarBytes = 11
        if T.self == String.self {
            let string = _identityCast(value, to: String.self)
            if reservingFirst { bytes.reserveCapacity(bytes.count + scalarBytes + string.utf8.count) }
            writeTagged(string)
            return true
        }
        let isScalar = T.self == Int.self || T.self == Double.self || T.self == Bool.self || T.self == UInt64.self || T.self == Int64.self
        guard isScalar else { return false }
        if reservingFirst { bytes.reserveCapacity(bytes.count + scalarBytes) }
        if T.self == Int.self {
            writeTagged(signed: Int64(_identityCast(value, to: Int.self)))
        } else if T.self == Double.self {
            writeTagged(_identityCast(value, to: Double.self))
        } else if T.self == Bool.self {
            writeTagged(_identityCast(value, to: Bool.self))
        } else if T.self == UInt64.self {
            writeTagged(unsigned: _identityCast(value, to: UInt64.self))
        } else {
            writeTagged(signed: _identityCast(value, to: Int64.self))
        }
        return true
    }
}

extension WireError {
    /// The same error with its coding path filled in, when the reader that threw it had none.
    func located(_ path: [any CodingKey], _ key: (any CodingKey)?) -> WireError {
        func render() -> String {
            var full = path
            if let key { full.append(key) }
            return renderCodingPath(full)
        }
        switch self {
        case let .typeMismatch(expected, found, ""):
            return .typeMismatch(expected: expected, found: found, codingPath: render())
        case let .valueOutOfRange(message, ""):
            return .valueOutOfRange(message, codingPath: render())
        case let .malformed(message, ""):
            return .malformed(message, codingPath: render())
        default:
            return self
        }
    }
}
