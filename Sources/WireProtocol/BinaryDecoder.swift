import Foundation

/// The binary codec's `Decoder`: reads values in place from the borrowed payload bytes.
///
/// One decoder object serves a whole message: decoding a nested value repositions it and
/// restores it afterwards (decoding is strictly nested), so a nested struct costs no decoder
/// allocation. Containers remember their own offsets, so they stay correct whichever order
/// `Decodable` code reads them in.
final class BinaryDecoder: Decoder {
    let state: BinaryDecodingState
    /// Offset of the value this decoder currently stands for.
    // Not checked dynamically for exclusive access: only this class's non-reentrant methods
    // mutate them, never while user `init(from:)` code holds access.
    @exclusivity(unchecked) private var position: Int
    @exclusivity(unchecked) private(set) var codingPath: [any CodingKey]
    @exclusivity(unchecked) private(set) var depth: Int

    init(state: BinaryDecodingState, position: Int, codingPath: [any CodingKey], depth: Int) {
        self.state = state
        self.position = position
        self.codingPath = codingPath
        self.depth = depth
    }

    /// Makes this root decoder ready for another message (`WireCodingScratch`), its coding path's
    /// storage kept; its state is reset separately.
    func reset() {
        position = 0
        if !codingPath.isEmpty { codingPath.removeAll(keepingCapacity: true) }
        depth = 0
    }

    var userInfo: [CodingUserInfoKey: Any] { state.userInfo }
    var limits: WireLimits { state.limits }

    // MARK: Decoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        do throws(WireError) {
            return KeyedDecodingContainer(try keyedContainer(Key.self, at: position))
        } catch {
            throw error.located(codingPath, nil)
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        do throws(WireError) {
            return try unkeyedContainer(at: position)
        } catch {
            throw error.located(codingPath, nil)
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        BinarySingleValueDecodingContainer(decoder: self, start: position)
    }

    // MARK: Containers

    func keyedContainer<Key: CodingKey>(_: Key.Type, at offset: Int) throws(WireError) -> BinaryKeyedDecodingContainer<Key> {
        var reader = try state.reader(at: offset)
        let tag = try reader.readByte("value tag")
        guard tag == BinaryTag.keyed.rawValue else {
            throw .typeMismatch(expected: "keyed container", found: BinaryTag.name(tag), codingPath: "")
        }
        let count = try reader.readLength(
            limit: limits.maxCollectionCount, minimumItemBytes: 2, "keyed container count")
        return BinaryKeyedDecodingContainer(decoder: self, start: offset, entriesStart: reader.offset, count: count)
    }

    func unkeyedContainer(at offset: Int) throws(WireError) -> BinaryUnkeyedDecodingContainer {
        var reader = try state.reader(at: offset)
        let tag = try reader.readByte("value tag")
        guard tag == BinaryTag.unkeyed.rawValue else {
            throw .typeMismatch(expected: "unkeyed container", found: BinaryTag.name(tag), codingPath: "")
        }
        let count = try reader.readLength(limit: limits.maxCollectionCount, "unkeyed container count")
        return BinaryUnkeyedDecodingContainer(decoder: self, start: offset, elementsStart: reader.offset, count: count)
    }

    /// A decoder for `superDecoder()`: its own object, since the caller may keep it.
    func superDecoder(at offset: Int, key: any CodingKey) -> BinaryDecoder {
        BinaryDecoder(state: state, position: offset, codingPath: codingPath + [key], depth: depth + 1)
    }

    /// The offset just past the value at `offset`.
    func end(ofValueAt offset: Int) throws(WireError) -> Int {
        try state.end(ofValueAt: offset, depth: depth)
    }

    // MARK: Values

    /// Decodes a `T` from the value at `offset`; `end` receives the offset after it.
    ///
    /// Strings, common numbers and raw bytes are read directly (a metatype comparison is far
    /// cheaper than a trip through `init(from:)` and a single-value container); everything else
    /// goes through `T.init(from:)` with this decoder repositioned at the value.
    func decodeValue<T: Decodable>(_ type: T.Type, at offset: Int, key: (any CodingKey)?, end: inout Int) throws -> T {
        do throws(WireError) {
            var reader = try state.reader(at: offset)
            if Self.readsDirectly(T.self) {
                let value = try Self.readDirectScalar(T.self, from: &reader, limits: limits)
                end = reader.offset
                return value
            } else if reader.peekByte() == BinaryTag.unkeyed.rawValue, let integers = try readIntegerArray(T.self, &reader) {
                end = reader.offset
                return integers
            } else if reader.peekByte() == BinaryTag.bytes.rawValue {
                // Taken as `T` with `_identityCast` (see `readDirectScalar`).
                if T.self == Data.self {
                    let value = Data(try reader.readBytes(limits: limits))
                    end = reader.offset
                    return _identityCast(value, to: T.self)
                } else if ObjectIdentifier(T.self) == byteArrayType {
                    let value = Array(try reader.readBytes(limits: limits))
                    end = reader.offset
                    return _identityCast(value, to: T.self)
                }
            }
        } catch {
            throw error.located(codingPath, key)
        }
        guard depth < limits.maxDepth else { throw WireError.nestingTooDeep(limit: limits.maxDepth) }
        let savedPosition = position
        position = offset
        depth += 1
        if let key { codingPath.append(key) }
        defer {
            position = savedPosition
            depth -= 1
            if key != nil { codingPath.removeLast() }
        }
        let value = try T(from: self)
        end = try self.end(ofValueAt: offset)
        return value
    }
}

extension BinaryDecoder {
    /// Whether `T` is a scalar read directly (`readDirectScalar`): `String`, `Int`, `Double`,
    /// `Bool`, `Int64`, `UInt64`, the types `ByteWriter.writeDirectScalar` writes.
    static func readsDirectly<T>(_: T.Type) -> Bool {
        T.self == String.self || T.self == Int.self || T.self == Double.self || T.self == Bool.self || T.self == Int64.self
            || T.self == UInt64.self
    }

    /// Reads a scalar of a type `readsDirectly` accepts (a metatype comparison is far cheaper
    /// than a trip through `init(from:)` and a single-value container). The value is taken as
    /// `T` with `_identityCast`: an `as? T` is a dynamic cast and needs `Optional<T>`'s
    /// metadata, looked up on every value.
    static func readDirectScalar<T>(_: T.Type, from reader: inout ByteReader, limits: WireLimits) throws(WireError) -> T {
        if T.self == String.self {
            _identityCast(try reader.readString(limits: limits), to: T.self)
        } else if T.self == Int.self {
            _identityCast(try reader.readInteger(Int.self), to: T.self)
        } else if T.self == Double.self {
            _identityCast(try reader.readDouble(), to: T.self)
        } else if T.self == Bool.self {
            _identityCast(try reader.readBool(), to: T.self)
        } else if T.self == Int64.self {
            _identityCast(try reader.readInteger(Int64.self), to: T.self)
        } else {
            _identityCast(try reader.readInteger(UInt64.self), to: T.self)
        }
    }

    /// `[UInt64]` and `[UInt32]` (the sequence numbers and indexes in the remote runtime's
    /// message headers, one per event or output) read in one loop from the unkeyed container at
    /// the reader, instead of a container object and a generic decode per element. The bytes
    /// are the same either way; `nil` for any other `T`.
    fileprivate func readIntegerArray<T>(_: T.Type, _ reader: inout ByteReader) throws(WireError) -> T? {
        switch ObjectIdentifier(T.self) {
        case uint64ArrayType: try readIntegers(UInt64.self, &reader) as? T
        case uint32ArrayType: try readIntegers(UInt32.self, &reader) as? T
        default: nil
        }
    }

    private func readIntegers<I: FixedWidthInteger>(_: I.Type, _ reader: inout ByteReader) throws(WireError) -> [I] {
        _ = try reader.readByte("value tag")
        let count = try reader.readLength(limit: limits.maxCollectionCount, "unkeyed container count")
        var values: [I] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try reader.readInteger(I.self)) }
        return values
    }
}

/// A single value read in place; the decoder's current value.
struct BinarySingleValueDecodingContainer: SingleValueDecodingContainer {
    let decoder: BinaryDecoder
    let start: Int

    var codingPath: [any CodingKey] { decoder.codingPath }

    private func read<T>(_ body: (inout ByteReader) throws(WireError) -> T) throws -> T {
        do throws(WireError) {
            var reader = try decoder.state.reader(at: start)
            let value = try body(&reader)
            decoder.state.noteEnd(start: start, end: reader.offset)
            return value
        } catch {
            throw error.located(codingPath, nil)
        }
    }

    func decodeNil() -> Bool {
        do {
            var reader = try decoder.state.reader(at: start)
            return try reader.readNilIfPresent()
        } catch {
            decoder.state.defer(error)
            return false
        }
    }

    func decode(_ type: Bool.Type) throws -> Bool { try read { (r) throws(WireError) in try r.readBool() } }
    func decode(_ type: String.Type) throws -> String {
        try read { (r) throws(WireError) in try r.readString(limits: decoder.limits) }
    }
    func decode(_ type: Double.Type) throws -> Double { try read { (r) throws(WireError) in try r.readDouble() } }
    func decode(_ type: Float.Type) throws -> Float { try read { (r) throws(WireError) in try r.readFloat() } }
    func decode(_ type: Int.Type) throws -> Int { try read { (r) throws(WireError) in try r.readInteger(type) } }
    func decode(_ type: Int8.Type) throws -> Int8 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    func decode(_ type: Int16.Type) throws -> Int16 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    func decode(_ type: Int32.Type) throws -> Int32 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    func decode(_ type: Int64.Type) throws -> Int64 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    func decode(_ type: Int128.Type) throws -> Int128 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    func decode(_ type: UInt.Type) throws -> UInt { try read { (r) throws(WireError) in try r.readInteger(type) } }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    func decode(_ type: UInt128.Type) throws -> UInt128 { try read { (r) throws(WireError) in try r.readInteger(type) } }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        var end = start
        let value = try decoder.decodeValue(type, at: start, key: nil, end: &end)
        decoder.state.noteEnd(start: start, end: end)
        return value
    }
}

/// `[UInt8]`'s metatype, looked up once (comparing against `[UInt8].self` inline would fetch
/// the generic metadata on every value).
let byteArrayType = ObjectIdentifier([UInt8].self)
/// `[UInt64]`'s and `[UInt32]`'s metatypes, for the integer-array fast paths (same reason).
let uint64ArrayType = ObjectIdentifier([UInt64].self)
let uint32ArrayType = ObjectIdentifier([UInt32].self)
