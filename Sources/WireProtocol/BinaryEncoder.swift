import Foundation

/// The binary codec's `Encoder`: streams every value of one message into a single byte array.
///
/// Containers are written in place as they are filled, with a one-byte count placeholder patched
/// when the container closes (widened only if the count needs more than one varint byte). A
/// container closes when its parent (or an ancestor) is written to again, or when the value that
/// opened it finishes encoding. This is what synthesized and standard-library `Codable` do; an
/// implementation that writes to a container after one of its ancestors moved on gets a clear
/// `.encodingFailed` instead of a corrupt message (JSONWireCodec accepts such code).
/// Keys are interned per message: the first use writes the text, later uses an index.
final class BinaryEncoder: Encoder {
    /// What an open entry of the container stack is.
    enum FrameKind {
        /// A value is expected here (after a key, `superEncoder`, or at the root) but has not
        /// been written yet; closing it writes an empty keyed container, as JSON writes `{}`.
        case slot
        /// A single value was written into the slot.
        case single
        case keyed
        case unkeyed
    }

    struct Frame {
        var kind: FrameKind
        var countPosition: Int
        var count: Int
        var serial: UInt32
    }

    // Exclusivity is not checked dynamically on these hot properties: they are only mutated by
    // this class's own non-reentrant methods, never while user `encode(to:)` code runs.
    @exclusivity(unchecked) var writer = ByteWriter(capacity: 128)
    @exclusivity(unchecked) private(set) var stack: [Frame] = []
    @exclusivity(unchecked) private var nextSerial: UInt32 = 0
    @exclusivity(unchecked) private var keys = KeyInterner()
    /// The stack index of the value currently being encoded through `encode(to:)`.
    @exclusivity(unchecked) private var frameBase = -1
    @exclusivity(unchecked) private var depth = 0
    /// An error met in a non-throwing `Encoder` method, reported when encoding finishes.
    private var deferredError: WireError?
    @exclusivity(unchecked) private(set) var codingPath: [any CodingKey] = []
    private(set) var userInfo: [CodingUserInfoKey: Any]
    let limits: WireLimits

    init(limits: WireLimits, userInfo: [CodingUserInfoKey: Any]) {
        self.limits = limits
        self.userInfo = userInfo
    }

    /// Makes this encoder ready for another message (`WireCodingScratch`): everything emptied,
    /// storage kept.
    func reset(userInfo: [CodingUserInfoKey: Any]) {
        self.userInfo = userInfo
        // Each store emptied only when it holds something: a reused encoder is reset before and
        // after every message, and emptying an empty array still costs a call of its own.
        if !writer.bytes.isEmpty { writer.bytes.removeAll(keepingCapacity: true) }
        if !stack.isEmpty { stack.removeAll(keepingCapacity: true) }
        nextSerial = 0
        keys.removeAll()
        frameBase = -1
        depth = 0
        deferredError = nil
        if !codingPath.isEmpty { codingPath.removeAll(keepingCapacity: true) }
    }

    /// Encodes a whole message; with `copying`, returns a copy of the bytes at their exact size
    /// and keeps the buffer for the next message.
    func encodeRoot<T: Encodable>(_ value: T, copying: Bool = false) throws(WireError) -> [UInt8] {
        try encodeValue(value, key: nil)
        if let deferredError { throw deferredError }
        guard writer.count <= limits.maxFrameBytes else {
            throw .lengthTooLarge(
                declared: UInt64(writer.count), limit: limits.maxFrameBytes, context: "encoded payload")
        }
        // A copy of its own (`Array(_:)` of an array would share the buffer kept for reuse).
        return copying ? writer.bytes.withUnsafeBufferPointer { Array($0) } : writer.bytes
    }

    // MARK: Encoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let (index, serial) = openContainer(at: frameBase, keyed: true)
        return KeyedEncodingContainer(BinaryKeyedEncodingContainer<Key>(encoder: self, index: index, serial: serial))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let (index, serial) = openContainer(at: frameBase, keyed: false)
        return BinaryUnkeyedEncodingContainer(encoder: self, index: index, serial: serial)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        let serial = frameBase >= 0 && frameBase < stack.count ? stack[frameBase].serial : 0
        return BinarySingleValueEncodingContainer(encoder: self, index: frameBase, serial: serial)
    }

    // MARK: Stack

    private func fail(_ message: String) -> WireError {
        .encodingFailed(message, codingPath: renderCodingPath(codingPath))
    }

    /// Makes the container at `index` the innermost open one, closing everything nested in it.
    func activate(_ index: Int, _ serial: UInt32) throws(WireError) {
        guard index >= 0, index < stack.count, stack[index].serial == serial else {
            throw deferredError ?? fail(
                "container written after its parent moved on (the binary codec needs containers filled in nesting order)")
        }
        while stack.count > index + 1 { closeTop() }
    }

    private func closeTop() {
        let frame = stack.removeLast()
        switch frame.kind {
        case .slot:
            writer.write(BinaryTag.keyed.rawValue)
            writer.write(0)
        case .single:
            break
        case .keyed, .unkeyed:
            if frame.count > limits.maxCollectionCount, deferredError == nil {
                deferredError = .lengthTooLarge(
                    declared: UInt64(frame.count), limit: limits.maxCollectionCount, context: "container count")
            }
            writer.patchVarint(frame.count, at: frame.countPosition)
        }
    }

    private func push(_ kind: FrameKind) -> (Int, UInt32) {
        guard stack.count < limits.maxDepth else {
            if deferredError == nil { deferredError = .nestingTooDeep(limit: limits.maxDepth) }
            return (-1, 0)
        }
        // Room for a typical nesting depth, reserved by the first container: a message of a
        // scalar (an event, an output) never opens one.
        if stack.capacity == 0 { stack.reserveCapacity(8) }
        nextSerial &+= 1
        var frame = Frame(kind: kind, countPosition: 0, count: 0, serial: nextSerial)
        if kind == .keyed || kind == .unkeyed {
            writer.write(kind == .keyed ? BinaryTag.keyed.rawValue : BinaryTag.unkeyed.rawValue)
            frame.countPosition = writer.count
            writer.write(0)
        }
        stack.append(frame)
        return (stack.count - 1, nextSerial)
    }

    /// Turns the slot at `index` into a container (or returns the container already there).
    func openContainer(at index: Int, serial: UInt32? = nil, keyed: Bool) -> (Int, UInt32) {
        guard index >= 0, index < stack.count, serial == nil || stack[index].serial == serial else {
            if deferredError == nil { deferredError = fail("encoder used after its value was finished") }
            return (-1, 0)
        }
        switch (stack[index].kind, keyed) {
        case (.slot, _):
            while stack.count > index + 1 { closeTop() }
            writer.write(keyed ? BinaryTag.keyed.rawValue : BinaryTag.unkeyed.rawValue)
            stack[index].kind = keyed ? .keyed : .unkeyed
            stack[index].countPosition = writer.count
            stack[index].count = 0
            writer.write(0)
            return (index, stack[index].serial)
        case (.keyed, true), (.unkeyed, false):
            return (index, stack[index].serial)
        default:
            if deferredError == nil {
                deferredError = fail("asked for a \(keyed ? "keyed" : "unkeyed") container after encoding another kind of value")
            }
            return (-1, 0)
        }
    }

    /// Prepares the next entry of the container at `index`: closes nested containers, counts it.
    func beginEntry(_ index: Int, _ serial: UInt32) throws(WireError) {
        try activate(index, serial)
        stack[index].count += 1
    }

    /// `beginEntry` for the non-throwing `Encoder` methods: a failure is kept and reported when
    /// encoding finishes.
    func beginEntryDeferring(_ index: Int, _ serial: UInt32) -> Bool {
        do {
            try beginEntry(index, serial)
            return true
        } catch {
            if deferredError == nil { deferredError = error }
            return false
        }
    }

    /// Opens a container nested directly in the (already begun) entry.
    func pushNested(keyed: Bool) -> (Int, UInt32) {
        push(keyed ? .keyed : .unkeyed)
    }

    /// Opens a slot for a `superEncoder()`.
    func pushSlot() -> (Int, UInt32) {
        push(.slot)
    }

    /// Marks the slot at `index` as holding a single value, before it is written.
    func fillSingle(_ index: Int, _ serial: UInt32) throws(WireError) {
        guard index >= 0, index < stack.count, stack[index].serial == serial else {
            throw deferredError ?? fail("single value container used after its value was finished")
        }
        guard stack[index].kind == .slot else {
            throw fail("single value container already holds a value")
        }
        while stack.count > index + 1 { closeTop() }
        stack[index].kind = .single
    }

    func slotIsEmpty(_ index: Int, _ serial: UInt32) -> Bool {
        index >= 0 && index < stack.count && stack[index].serial == serial && stack[index].kind == .slot
    }

    // MARK: Keys

    func writeKey(_ key: some CodingKey) {
        let name = key.stringValue
        if let index = keys.index(of: name) {
            writer.writeVarint(UInt64(index) &+ 1)
        } else {
            writer.write(0)
            writer.writeString(name)
        }
    }

    // MARK: Values

    func writeNil() { writer.write(BinaryTag.null.rawValue) }
    func write(_ value: Bool) { writer.writeTagged(value) }
    func write(_ value: String) { writer.writeTagged(value) }
    func write(_ value: Double) { writer.writeTagged(value) }
    func write(_ value: Float) {
        writer.write(BinaryTag.float32.rawValue)
        writer.write(bigEndian: value.bitPattern)
    }
    func writeSigned(_ value: Int64) { writer.writeTagged(signed: value) }
    func writeUnsigned(_ value: UInt64) { writer.writeTagged(unsigned: value) }
    func write(_ value: Int128) {
        writer.write(BinaryTag.signed.rawValue)
        writer.writeVarint(zigzag(value))
    }
    func write(_ value: UInt128) {
        writer.write(BinaryTag.unsigned.rawValue)
        writer.writeVarint(value)
    }
    func writeBytes(_ raw: UnsafeRawBufferPointer) { writer.writeTagged(bytes: raw) }

    /// Writes an array of unsigned integers (the sequence numbers in the remote runtime's
    /// message headers, one per event or output) in one loop: the same bytes as an unkeyed
    /// container of `.unsigned` values, without a container and a generic encode per element.
    private func writeUnsignedArray<I: UnsignedInteger & FixedWidthInteger>(_ values: [I]) {
        if values.count > limits.maxCollectionCount, deferredError == nil {
            deferredError = .lengthTooLarge(declared: UInt64(values.count), limit: limits.maxCollectionCount, context: "container count")
        }
        writer.write(BinaryTag.unkeyed.rawValue)
        writer.writeVarint(UInt64(values.count))
        for value in values { writeUnsigned(UInt64(value)) }
    }

    /// Writes types with a direct representation without going through `encode(to:)`;
    /// returns false for everything else. Scalars as `ByteWriter.writeDirectScalar` writes them;
    /// `Data` and `[UInt8]` become raw bytes; `[UInt64]` and `[UInt32]` the same unkeyed
    /// container their own `encode(to:)` would write.
    private func writeDirect<T: Encodable>(_ value: T) -> Bool {
        if writer.writeDirectScalar(value, reservingFirst: false) { return true }
        if T.self == Data.self {
            _identityCast(value, to: Data.self).withUnsafeBytes { writeBytes($0) }
        } else if ObjectIdentifier(T.self) == byteArrayType {
            _identityCast(value, to: [UInt8].self).withUnsafeBytes { writeBytes($0) }
        } else if ObjectIdentifier(T.self) == uint64ArrayType {
            writeUnsignedArray(_identityCast(value, to: [UInt64].self))
        } else if ObjectIdentifier(T.self) == uint32ArrayType {
            writeUnsignedArray(_identityCast(value, to: [UInt32].self))
        } else {
            return false
        }
        return true
    }

    /// A whole message holding one scalar of a type `ByteWriter.writeDirectScalar` writes (an
    /// event's or an output's value, usually), written without an encoder: the same bytes as
    /// `encodeRoot`, in an array of their own size, without the encoder object, its buffer and
    /// its stack. `nil` for any other type.
    static func directScalarRoot<T: Encodable>(_ value: T, limits: WireLimits) throws(WireError) -> [UInt8]? {
        var writer = ByteWriter()
        guard writer.writeDirectScalar(value, reservingFirst: true) else { return nil }
        guard writer.count <= limits.maxFrameBytes else {
            throw .lengthTooLarge(declared: UInt64(writer.count), limit: limits.maxFrameBytes, context: "encoded payload")
        }
        return writer.bytes
    }

    /// Encodes `value` as the next value (after a key, as an element, or as the root).
    func encodeValue<T: Encodable>(_ value: T, key: (any CodingKey)?) throws(WireError) {
        if writeDirect(value) { return }
        let (slot, serial) = push(.slot)
        guard slot >= 0, depth < limits.maxDepth else { throw .nestingTooDeep(limit: limits.maxDepth) }
        try encodeThroughSlot(value, slot: slot, serial: serial, key: key)
        while stack.count > slot { closeTop() }
    }

    /// Runs `value.encode(to:)` with the slot at `slot` as its target.
    func encodeThroughSlot<T: Encodable>(
        _ value: T, slot: Int, serial: UInt32, key: (any CodingKey)?
    ) throws(WireError) {
        guard depth < limits.maxDepth else { throw .nestingTooDeep(limit: limits.maxDepth) }
        let savedBase = frameBase
        frameBase = slot
        depth += 1
        if let key { codingPath.append(key) }
        defer {
            frameBase = savedBase
            depth -= 1
            if key != nil { codingPath.removeLast() }
        }
        do {
            try value.encode(to: self)
        } catch {
            throw deferredError ?? wireError(from: error)
        }
        if let deferredError { throw deferredError }
    }

    /// Encodes `value` into a single-value container's slot.
    func encodeSingle<T: Encodable>(_ value: T, slot: Int, serial: UInt32) throws(WireError) {
        guard slotIsEmpty(slot, serial) else {
            try fillSingle(slot, serial)  // throws the precise reason
            return
        }
        if T.self == String.self || T.self == Int.self || T.self == Data.self || ObjectIdentifier(T.self) == byteArrayType
            || T.self == Double.self || T.self == Bool.self || T.self == UInt64.self || T.self == Int64.self
        {
            try fillSingle(slot, serial)
            _ = writeDirect(value)
            return
        }
        try encodeThroughSlot(value, slot: slot, serial: serial, key: nil)
    }
}

/// A value that is written directly into the slot of the value being encoded.
struct BinarySingleValueEncodingContainer: SingleValueEncodingContainer {
    let encoder: BinaryEncoder
    let index: Int
    let serial: UInt32

    var codingPath: [any CodingKey] { encoder.codingPath }

    private func fill() throws(WireError) { try encoder.fillSingle(index, serial) }

    mutating func encodeNil() throws { try fill(); encoder.writeNil() }
    mutating func encode(_ value: Bool) throws { try fill(); encoder.write(value) }
    mutating func encode(_ value: String) throws { try fill(); encoder.write(value) }
    mutating func encode(_ value: Double) throws { try fill(); encoder.write(value) }
    mutating func encode(_ value: Float) throws { try fill(); encoder.write(value) }
    mutating func encode(_ value: Int) throws { try fill(); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int8) throws { try fill(); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int16) throws { try fill(); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int32) throws { try fill(); encoder.writeSigned(Int64(value)) }
    mutating func encode(_ value: Int64) throws { try fill(); encoder.writeSigned(value) }
    mutating func encode(_ value: Int128) throws { try fill(); encoder.write(value) }
    mutating func encode(_ value: UInt) throws { try fill(); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { try fill(); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { try fill(); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { try fill(); encoder.writeUnsigned(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { try fill(); encoder.writeUnsigned(value) }
    mutating func encode(_ value: UInt128) throws { try fill(); encoder.write(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try encoder.encodeSingle(value, slot: index, serial: serial)
    }
}

/// The encoder handed out by `superEncoder()`: targets its own slot in the shared stream.
final class BinarySuperEncoder: Encoder {
    let encoder: BinaryEncoder
    let index: Int
    let serial: UInt32
    let codingPath: [any CodingKey]

    init(encoder: BinaryEncoder, index: Int, serial: UInt32, codingPath: [any CodingKey]) {
        self.encoder = encoder
        self.index = index
        self.serial = serial
        self.codingPath = codingPath
    }

    var userInfo: [CodingUserInfoKey: Any] { encoder.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let (index, serial) = encoder.openContainer(at: index, serial: serial, keyed: true)
        return KeyedEncodingContainer(BinaryKeyedEncodingContainer<Key>(encoder: encoder, index: index, serial: serial))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let (index, serial) = encoder.openContainer(at: index, serial: serial, keyed: false)
        return BinaryUnkeyedEncodingContainer(encoder: encoder, index: index, serial: serial)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        BinarySingleValueEncodingContainer(encoder: encoder, index: index, serial: serial)
    }
}
