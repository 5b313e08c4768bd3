/// A keyed container being written: each entry is a key reference followed by a tagged value.
///
/// The container only remembers where it lives in the encoder's stack; the entry count is kept
/// there so copies of this struct (as `Codable` code makes) all count into the same container.
struct BinaryKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: BinaryEncoder
    let index: Int
    let serial: UInt32

    var codingPath: [any CodingKey] { encoder.codingPath }

    private func begin(_ key: Key) throws(WireError) {
        try encoder.beginEntry(index, serial)
        encoder.writeKey(key)
    }

    /// Begins an entry from a non-throwing method; a failure is reported when encoding ends.
    private func beginDeferring(_ key: Key) -> Bool {
        guard encoder.beginEntryDeferring(index, serial) else { return false }
        encoder.writeKey(key)
        return true
    }

    mutating func encodeNil(forKey key: Key) throws { try begin(key); encoder.writeNil() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try begin(key); encoder.write(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { try begin(key); encoder.write(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try begin(key); encoder.write(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try begin(key); encoder.write(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try begin(key); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try begin(key); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try begin(key); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try begin(key); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try begin(key); encoder.writeSigned(value) }
    mutating func encode(_ value: Int128, forKey key: Key) throws { try begin(key); encoder.write(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try begin(key); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try begin(key); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try begin(key); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try begin(key); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try begin(key); encoder.writeUnsigned(value) }
    mutating func encode(_ value: UInt128, forKey key: Key) throws { try begin(key); encoder.write(value) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try begin(key)
        try encoder.encodeValue(value, key: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let (index, serial) = beginDeferring(key) ? encoder.pushNested(keyed: true) : (-1, 0)
        return KeyedEncodingContainer(BinaryKeyedEncodingContainer<NestedKey>(encoder: encoder, index: index, serial: serial))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let (index, serial) = beginDeferring(key) ? encoder.pushNested(keyed: false) : (-1, 0)
        return BinaryUnkeyedEncodingContainer(encoder: encoder, index: index, serial: serial)
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(entry: SuperKey())
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(entry: key)
    }

    private func superEncoder(entry key: some CodingKey) -> any Encoder {
        var slot = (-1, UInt32(0))
        if encoder.beginEntryDeferring(index, serial) {
            encoder.writeKey(key)
            slot = encoder.pushSlot()
        }
        return BinarySuperEncoder(encoder: encoder, index: slot.0, serial: slot.1, codingPath: codingPath + [key])
    }
}

/// An unkeyed container being written: tagged values one after another.
struct BinaryUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoder: BinaryEncoder
    let index: Int
    let serial: UInt32

    var codingPath: [any CodingKey] { encoder.codingPath }

    var count: Int {
        index >= 0 && index < encoder.stack.count && encoder.stack[index].serial == serial
            ? encoder.stack[index].count : 0
    }

    private func begin() throws(WireError) { try encoder.beginEntry(index, serial) }

    mutating func encodeNil() throws { try begin(); encoder.writeNil() }
    mutating func encode(_ value: Bool) throws { try begin(); encoder.write(value) }
    mutating func encode(_ value: String) throws { try begin(); encoder.write(value) }
    mutating func encode(_ value: Double) throws { try begin(); encoder.write(value) }
    mutating func encode(_ value: Float) throws { try begin(); encoder.write(value) }
    mutating func encode(_ value: Int) throws { try begin(); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int8) throws { try begin(); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int16) throws { try begin(); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int32) throws { try begin(); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int64) throws { try begin(); encoder.writeSigned(value) }
    mutating func encode(_ value: Int128) throws { try begin(); encoder.write(value) }
    mutating func encode(_ value: UInt) throws { try begin(); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { try begin(); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { try begin(); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { try begin(); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { try begin(); encoder.writeUnsigned(value) }
    mutating func encode(_ value: UInt128) throws { try begin(); encoder.write(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let position = count
        try begin()
        try encoder.encodeValue(value, key: IndexKey(position))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let (index, serial) = encoder.beginEntryDeferring(index, serial) ? encoder.pushNested(keyed: true) : (-1, 0)
        return KeyedEncodingContainer(BinaryKeyedEncodingContainer<NestedKey>(encoder: encoder, index: index, serial: serial))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let (index, serial) = encoder.beginEntryDeferring(index, serial) ? encoder.pushNested(keyed: false) : (-1, 0)
        return BinaryUnkeyedEncodingContainer(encoder: encoder, index: index, serial: serial)
    }

    mutating func superEncoder() -> any Encoder {
        let position = count
        var slot = (-1, UInt32(0))
        if encoder.beginEntryDeferring(index, serial) { slot = encoder.pushSlot() }
        return BinarySuperEncoder(
            encoder: encoder, index: slot.0, serial: slot.1, codingPath: codingPath + [IndexKey(position)])
    }
}
