/// A keyed container read in place.
///
/// Synthesized `init(from:)` asks for keys in the order they were encoded, so the container
/// first tries the next entry in sequence (no index, no skipping). Any other access pattern
/// (`allKeys`, a missing key, out-of-order reads) builds an index of entry offsets once; the
/// last entry's value is never skipped for that, so a one-entry container (an enum case) is
/// indexed for free. A class, because the protocol's methods are non-mutating.
final class BinaryKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    private let decoder: BinaryDecoder
    private let start: Int
    private let entriesStart: Int
    private let count: Int

    /// Entries consumed in sequence; `nextOffset` is where entry `nextIndex` starts, unless
    /// the previous entry's value (at `pendingValue`) has not been read past yet.
    // Exempt from dynamic exclusivity checks: only mutated by this class's own methods, never
    // while `Decodable` code holds access.
    @exclusivity(unchecked) private var nextIndex = 0
    @exclusivity(unchecked) private var nextOffset: Int
    @exclusivity(unchecked) private var pendingKey = -1
    @exclusivity(unchecked) private var pendingValue = -1

    /// (key table index, value offset) of every entry, once needed.
    @exclusivity(unchecked) private var entries: [Entry]?
    @exclusivity(unchecked) private var searchHint = 0

    private struct Entry {
        var key: Int
        var value: Int
    }

    /// The most keys a message may have for a name to be looked for among them, rather than
    /// in an index, once every entry was read in sequence (a scan per absent key is bounded).
    private static var keysScannedForAbsence: Int { 64 }

    init(decoder: BinaryDecoder, start: Int, entriesStart: Int, count: Int) {
        self.decoder = decoder
        self.start = start
        self.entriesStart = entriesStart
        self.count = count
        nextOffset = entriesStart
        if count == 0 { decoder.state.noteEnd(start: start, end: entriesStart) }
    }

    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] {
        do {
            let entries = try index()
            let table = decoder.state.keyTable
            var keys: [Key] = []
            keys.reserveCapacity(entries.count)
            for entry in entries {
                if let key = Key(stringValue: table[entry.key]) { keys.append(key) }
            }
            return keys
        } catch {
            decoder.state.defer(error)
            return []
        }
    }

    func contains(_ key: Key) -> Bool {
        do {
            return try find(key.stringValue) != nil
        } catch {
            decoder.state.defer(error)
            return false
        }
    }

    // MARK: Lookup

    private func index() throws(WireError) -> [Entry] {
        if let entries { return entries }
        var reader = try decoder.state.reader(at: entriesStart)
        var built: [Entry] = []
        built.reserveCapacity(count)
        for position in 0..<count {
            let key = try decoder.state.readKey(&reader)
            built.append(Entry(key: key, value: reader.offset))
            if position + 1 < count {
                try decoder.state.skipValue(&reader, depth: decoder.depth)
            }
        }
        entries = built
        return built
    }

    /// The offset of the value for the key named `name`, or nil when it is absent.
    private func find(_ name: String) throws(WireError) -> Int? {
        let state = decoder.state
        if entries == nil {
            if pendingValue >= 0 {
                if state.keyTable[pendingKey] == name { return pendingValue }
                nextOffset = try decoder.end(ofValueAt: pendingValue)
                pendingValue = -1
            }
            if nextIndex < count {
                var reader = try state.reader(at: nextOffset)
                let key = try state.readKey(&reader)
                if state.keyTable[key] == name {
                    nextIndex += 1
                    pendingKey = key
                    pendingValue = reader.offset
                    return reader.offset
                }
            } else if state.keyTable.count <= Self.keysScannedForAbsence, !state.keyTable.contains(name) {
                // Every entry was read in sequence, so each of this container's keys is in the
                // message's key table: a name it lacks is absent (an optional field left out,
                // asked for after the others), without an index skipping every value again.
                return nil
            }
        }
        let entries = try index()
        let table = state.keyTable
        for step in 0..<entries.count {
            var position = searchHint + step
            if position >= entries.count { position -= entries.count }
            if table[entries[position].key] == name {
                searchHint = position + 1
                return entries[position].value
            }
        }
        return nil
    }

    private func require(_ key: Key) throws(WireError) -> Int {
        guard let offset = try find(key.stringValue) else {
            throw .keyNotFound(key: key.stringValue, codingPath: renderCodingPath(codingPath))
        }
        return offset
    }

    /// Records that the value at `offset` was read up to `end`.
    private func consumed(_ offset: Int, end: Int) {
        guard offset == pendingValue else { return }
        nextOffset = end
        pendingValue = -1
        if nextIndex == count { decoder.state.noteEnd(start: start, end: end) }
    }

    private func read<T>(_ key: Key, _ body: (inout ByteReader) throws(WireError) -> T) throws -> T {
        do throws(WireError) {
            let offset = try require(key)
            var reader = try decoder.state.reader(at: offset)
            let value = try body(&reader)
            consumed(offset, end: reader.offset)
            return value
        } catch {
            throw error.located(codingPath, key)
        }
    }

    // MARK: Decoding

    func decodeNil(forKey key: Key) throws -> Bool {
        do throws(WireError) {
            let offset = try require(key)
            var reader = try decoder.state.reader(at: offset)
            guard try reader.readNilIfPresent() else { return false }
            consumed(offset, end: reader.offset)
            return true
        } catch {
            throw error.located(codingPath, key)
        }
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try read(key) { (r) throws(WireError) in try r.readBool() }
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        let limits = decoder.limits
        return try read(key) { (r) throws(WireError) in try r.readString(limits: limits) }
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try read(key) { (r) throws(WireError) in try r.readDouble() }
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try read(key) { (r) throws(WireError) in try r.readFloat() }
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try read(key) { (r) throws(WireError) in try r.readInteger(type) }
    }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        try read(key) { (r) throws(WireError) in try r.readInteger(type) }
    }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try read(key) { (r) throws(WireError) in try r.readInteger(type) }
    }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try read(key) { (r) throws(WireError) in try r.readInteger(type) }
    }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try read(key) { (r) throws(WireError) in try r.readInteger(type) }
    }
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 {
        try read(key) { (r) throws(WireError) in try r.readInteger(type) }
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        try read(key) { (r) throws(WireError) in try r.readInteger(type) }
    }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try read(key) { (r) throws(WireError) in try r.readInteger(type) }
    }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try read(key) { (r) throws(WireError) in try r.readInteger(type) }
    }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try read(key) { (r) throws(WireError) in try r.readInteger(type) }
    }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try read(key) { (r) throws(WireError) in try r.readInteger(type) }
    }
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 {
        try read(key) { (r) throws(WireError) in try r.readInteger(type) }
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let offset: Int
        do throws(WireError) {
            offset = try require(key)
        } catch {
            throw error.located(codingPath, key)
        }
        var end = offset
        let value = try decoder.decodeValue(type, at: offset, key: key, end: &end)
        consumed(offset, end: end)
        return value
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        do throws(WireError) {
            return KeyedDecodingContainer(try decoder.keyedContainer(type, at: try require(key)))
        } catch {
            throw error.located(codingPath, key)
        }
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        do throws(WireError) {
            return try decoder.unkeyedContainer(at: try require(key))
        } catch {
            throw error.located(codingPath, key)
        }
    }

    func superDecoder() throws -> any Decoder {
        let key = SuperKey()
        guard let offset = try find(key.stringValue) else {
            throw WireError.keyNotFound(key: key.stringValue, codingPath: renderCodingPath(codingPath))
        }
        return decoder.superDecoder(at: offset, key: key)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        decoder.superDecoder(at: try require(key), key: key)
    }
}

/// An unkeyed container read in place, element by element.
struct BinaryUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    private let decoder: BinaryDecoder
    private let start: Int
    private let elementCount: Int
    private(set) var currentIndex = 0
    /// Where element `currentIndex` starts, unless the previous one (at `pending`) was handed
    /// out as a container and has not been read past yet.
    private var offset: Int
    private var pending = -1

    init(decoder: BinaryDecoder, start: Int, elementsStart: Int, count: Int) {
        self.decoder = decoder
        self.start = start
        self.elementCount = count
        offset = elementsStart
        if count == 0 { decoder.state.noteEnd(start: start, end: elementsStart) }
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elementCount }
    var isAtEnd: Bool { currentIndex >= elementCount }

    /// The offset of the next element.
    private mutating func next() throws(WireError) -> Int {
        if pending >= 0 {
            offset = try decoder.end(ofValueAt: pending)
            pending = -1
        }
        guard currentIndex < elementCount else {
            throw .keyNotFound(key: IndexKey(currentIndex).stringValue, codingPath: renderCodingPath(codingPath))
        }
        return offset
    }

    private mutating func advance(to end: Int) {
        offset = end
        currentIndex += 1
        if currentIndex == elementCount { decoder.state.noteEnd(start: start, end: end) }
    }

    private mutating func read<T>(_ body: (inout ByteReader) throws(WireError) -> T) throws -> T {
        do throws(WireError) {
            var reader = try decoder.state.reader(at: try next())
            let value = try body(&reader)
            advance(to: reader.offset)
            return value
        } catch {
            throw error.located(codingPath, IndexKey(currentIndex))
        }
    }

    mutating func decodeNil() throws -> Bool {
        do throws(WireError) {
            var reader = try decoder.state.reader(at: try next())
            guard try reader.readNilIfPresent() else { return false }
            advance(to: reader.offset)
            return true
        } catch {
            throw error.located(codingPath, IndexKey(currentIndex))
        }
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try read { (r) throws(WireError) in try r.readBool() } }
    mutating func decode(_ type: String.Type) throws -> String {
        let limits = decoder.limits
        return try read { (r) throws(WireError) in try r.readString(limits: limits) }
    }
    mutating func decode(_ type: Double.Type) throws -> Double { try read { (r) throws(WireError) in try r.readDouble() } }
    mutating func decode(_ type: Float.Type) throws -> Float { try read { (r) throws(WireError) in try r.readFloat() } }
    mutating func decode(_ type: Int.Type) throws -> Int { try read { (r) throws(WireError) in try r.readInteger(type) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try read { (r) throws(WireError) in try r.readInteger(type) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try read { (r) throws(WireError) in try r.readInteger(type) } }
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try read { (r) throws(WireError) in try r.readInteger(type) } }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let element: Int
        do throws(WireError) {
            element = try next()
        } catch {
            throw error.located(codingPath, IndexKey(currentIndex))
        }
        var end = element
        let value = try decoder.decodeValue(type, at: element, key: IndexKey(currentIndex), end: &end)
        advance(to: end)
        return value
    }

    /// Hands out the next element as something read later; the element is read past lazily.
    private mutating func handOut<C>(_ make: (Int) throws(WireError) -> C) throws -> C {
        do throws(WireError) {
            let element = try next()
            let result = try make(element)
            currentIndex += 1
            pending = element
            return result
        } catch {
            throw error.located(codingPath, IndexKey(currentIndex))
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let decoder = self.decoder
        return try handOut { (element) throws(WireError) in
            KeyedDecodingContainer(try decoder.keyedContainer(type, at: element))
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let decoder = self.decoder
        return try handOut { (element) throws(WireError) -> any UnkeyedDecodingContainer in
            try decoder.unkeyedContainer(at: element)
        }
    }

    mutating func superDecoder() throws -> any Decoder {
        let decoder = self.decoder
        let index = currentIndex
        return try handOut { (element) throws(WireError) -> any Decoder in
            decoder.superDecoder(at: element, key: IndexKey(index))
        }
    }
}
