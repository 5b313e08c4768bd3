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

    /// Reads any integer as `T`, accepting either signedness when the value fits.
    mutating func readInteger<T: FixedWidthInteger>(_: T.Type) throws(WireError) -> T {
        let tag = try readByte("value tag")
        switch tag {
        case BinaryTag.unsigned.rawValue:
            if let byte = peekByte(), byte < 0x80 {
                offset += 1
                return T(truncatingIfNeeded: byte)  // 0…127 fits every integer type
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
