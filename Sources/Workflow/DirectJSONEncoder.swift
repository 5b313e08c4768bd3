import Foundation

/// Encodes a value to the bytes `JSONEncoder` writes with `.sortedKeys` (slashes escaped or not),
/// without `JSONEncoder`: for the hot path that encodes every settled rendering of every tree
/// (`WorkflowCluster`'s rendering JSON), where `JSONEncoder`'s boxes, dynamic casts and generic
/// metadata cost more than the bytes.
///
/// It writes what it can write exactly and no more: a value of a type `JSONEncoder` formats by a
/// strategy of its own (floating point, `Date`, `Data`, `URL`, `Decimal`), a `superEncoder`, a
/// container asked for twice in conflicting kinds, or a value that encodes nothing throws
/// `Unsupported`, and the caller encodes it with `JSONEncoder` instead; so the bytes are always
/// the ones `JSONEncoder` would write, and its errors are its own.
package struct DirectJSONEncoder {
    /// Why the value was left to `JSONEncoder`.
    package struct Unsupported: Error, CustomStringConvertible {
        package var description: String
    }

    /// Whether `/` is written `\/` (`JSONEncoder`'s default) or as itself (`.withoutEscapingSlashes`).
    package var escapingSlashes: Bool
    /// What the value's `encode(to:)` finds in `encoder.userInfo` (a rendering's sink exporter).
    package var userInfo: [CodingUserInfoKey: Any]

    package init(escapingSlashes: Bool, userInfo: [CodingUserInfoKey: Any] = [:]) {
        self.escapingSlashes = escapingSlashes
        self.userInfo = userInfo
    }

    /// The JSON of `value`, keys sorted by their UTF-8 bytes (as `.sortedKeys` sorts them).
    /// Throws `Unsupported` for what it leaves to `JSONEncoder`, and whatever `value` throws.
    package func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let run = Run(userInfo: userInfo)
        let root = try ValueEncoder.encoded(value, run: run, codingPath: [], topLevel: true)
        if let reason = run.unsupported { throw Unsupported(description: reason) }
        var out: [UInt8] = []
        out.reserveCapacity(256)
        root.write(to: &out, escapingSlashes: escapingSlashes)
        return out
    }
}

/// One `encode` call's shared state: its `userInfo`, and the first thing met that only
/// `JSONEncoder` writes exactly.
private final class Run {
    let userInfo: [CodingUserInfoKey: Any]
    var unsupported: String?

    init(userInfo: [CodingUserInfoKey: Any]) { self.userInfo = userInfo }

    func leave(_ reason: @autoclosure () -> String) {
        if unsupported == nil { unsupported = reason() }
    }

    /// A value of `type`, which `JSONEncoder` formats by a strategy of its own.
    func leave(formatted type: Any.Type) {
        leave("\(type) (JSONEncoder formats it by a strategy)")
    }
}

/// A value being encoded: a scalar already written, or a container filled as the value's
/// `encode(to:)` goes on (a reference, so a container kept by the caller still writes into it).
private enum EncodedValue {
    case literal(StaticString)
    case scalar([UInt8])
    case string(String)
    case object(EncodedObject)
    case array(EncodedArray)

    static var null: EncodedValue { .literal("null") }
    static func bool(_ value: Bool) -> EncodedValue { .literal(value ? "true" : "false") }
    static func integer(_ value: some BinaryInteger) -> EncodedValue { .scalar(Array(String(value).utf8)) }

    func write(to out: inout [UInt8], escapingSlashes: Bool) {
        switch self {
        case .literal(let text):
            text.withUTF8Buffer { out.append(contentsOf: $0) }
        case .scalar(let bytes):
            out.append(contentsOf: bytes)
        case .string(let string):
            JSONText.appendQuoted(string, escapingSlashes: escapingSlashes, to: &out)
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            let keys = object.members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (index, key) in keys.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONText.appendQuoted(key, escapingSlashes: escapingSlashes, to: &out)
                out.append(UInt8(ascii: ":"))
                object.members[key]!.write(to: &out, escapingSlashes: escapingSlashes)
            }
            out.append(UInt8(ascii: "}"))
        case .array(let array):
            out.append(UInt8(ascii: "["))
            for (index, element) in array.elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.write(to: &out, escapingSlashes: escapingSlashes)
            }
            out.append(UInt8(ascii: "]"))
        }
    }
}

private final class EncodedObject {
    var members: [String: EncodedValue] = [:]
}

private final class EncodedArray {
    var elements: [EncodedValue] = []
}

/// The `Encoder` a value's `encode(to:)` sees: its result is `value` once it returns.
private final class ValueEncoder: Encoder {
    let run: Run
    let codingPath: [any CodingKey]
    var value: EncodedValue?

    init(run: Run, codingPath: [any CodingKey]) {
        self.run = run
        self.codingPath = codingPath
    }

    var userInfo: [CodingUserInfoKey: Any] { run.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: EncodedObject
        switch value {
        case .object(let existing)?: object = existing
        case nil: object = EncodedObject(); value = .object(object)
        default: object = EncodedObject(); run.leave("a keyed container after another kind of value")
        }
        return KeyedEncodingContainer(KeyedContainer<Key>(run: run, object: object, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: EncodedArray
        switch value {
        case .array(let existing)?: array = existing
        case nil: array = EncodedArray(); value = .array(array)
        default: array = EncodedArray(); run.leave("an unkeyed container after another kind of value")
        }
        return UnkeyedContainer(run: run, array: array, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleValueContainer(encoder: self) }

    /// Encodes `value` as this encoder's value.
    func store<T: Encodable>(_ value: T) throws {
        self.value = try Self.encoded(value, run: run, codingPath: codingPath)
    }

    /// `value` encoded at `codingPath`: a scalar written at once, anything else through its
    /// `encode(to:)`. A `topLevel` value that encodes nothing is left to `JSONEncoder` (which
    /// refuses it); inside another value it is an empty object, as `JSONEncoder` writes it.
    static func encoded<T: Encodable>(_ value: T, run: Run, codingPath: [any CodingKey], topLevel: Bool = false) throws -> EncodedValue {
        // Cheap metatype comparisons first: the types `JSONEncoder` formats by its strategies.
        if T.self == String.self { return .string(value as! String) }
        if T.self == Int.self { return .integer(value as! Int) }
        if T.self == Bool.self { return .bool(value as! Bool) }
        if T.self == Double.self || T.self == Float.self || T.self == Date.self || T.self == Data.self || T.self == URL.self
            || T.self == Decimal.self
        {
            run.leave(formatted: T.self)
            return .null
        }
        let encoder = ValueEncoder(run: run, codingPath: codingPath)
        try value.encode(to: encoder)
        if let encoded = encoder.value { return encoded }
        if topLevel { run.leave("\(T.self) encoded no value") }
        return .object(EncodedObject())
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let run: Run
    let object: EncodedObject
    let codingPath: [any CodingKey]

    func encodeNil(forKey key: Key) throws { object.members[key.stringValue] = .null }
    func encode(_ value: Bool, forKey key: Key) throws { object.members[key.stringValue] = .bool(value) }
    func encode(_ value: String, forKey key: Key) throws { object.members[key.stringValue] = .string(value) }
    func encode(_ value: Double, forKey key: Key) throws { run.leave(formatted: Double.self) }
    func encode(_ value: Float, forKey key: Key) throws { run.leave(formatted: Float.self) }
    func encode(_ value: Int, forKey key: Key) throws { object.members[key.stringValue] = .integer(value) }
    func encode(_ value: Int8, forKey key: Key) throws { object.members[key.stringValue] = .integer(value) }
    func encode(_ value: Int16, forKey key: Key) throws { object.members[key.stringValue] = .integer(value) }
    func encode(_ value: Int32, forKey key: Key) throws { object.members[key.stringValue] = .integer(value) }
    func encode(_ value: Int64, forKey key: Key) throws { object.members[key.stringValue] = .integer(value) }
    func encode(_ value: UInt, forKey key: Key) throws { object.members[key.stringValue] = .integer(value) }
    func encode(_ value: UInt8, forKey key: Key) throws { object.members[key.stringValue] = .integer(value) }
    func encode(_ value: UInt16, forKey key: Key) throws { object.members[key.stringValue] = .integer(value) }
    func encode(_ value: UInt32, forKey key: Key) throws { object.members[key.stringValue] = .integer(value) }
    func encode(_ value: UInt64, forKey key: Key) throws { object.members[key.stringValue] = .integer(value) }

    func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        object.members[key.stringValue] = try ValueEncoder.encoded(value, run: run, codingPath: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        // Asked twice for the same key: the same object, as `JSONEncoder` gives.
        let nested: EncodedObject
        if case .object(let existing)? = object.members[key.stringValue] {
            nested = existing
        } else {
            nested = EncodedObject()
            object.members[key.stringValue] = .object(nested)
        }
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(run: run, object: nested, codingPath: codingPath + [key]))
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested: EncodedArray
        if case .array(let existing)? = object.members[key.stringValue] {
            nested = existing
        } else {
            nested = EncodedArray()
            object.members[key.stringValue] = .array(nested)
        }
        return UnkeyedContainer(run: run, array: nested, codingPath: codingPath + [key])
    }

    func superEncoder() -> any Encoder {
        run.leave("a superEncoder")
        return ValueEncoder(run: run, codingPath: codingPath)
    }

    func superEncoder(forKey key: Key) -> any Encoder {
        run.leave("a superEncoder")
        return ValueEncoder(run: run, codingPath: codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let run: Run
    let array: EncodedArray
    let codingPath: [any CodingKey]

    var count: Int { array.elements.count }

    private var nextPath: [any CodingKey] { codingPath + [IndexKey(intValue: array.elements.count)] }

    mutating func encodeNil() throws { array.elements.append(.null) }
    mutating func encode(_ value: Bool) throws { array.elements.append(.bool(value)) }
    mutating func encode(_ value: String) throws { array.elements.append(.string(value)) }
    mutating func encode(_ value: Double) throws { run.leave(formatted: Double.self) }
    mutating func encode(_ value: Float) throws { run.leave(formatted: Float.self) }
    mutating func encode(_ value: Int) throws { array.elements.append(.integer(value)) }
    mutating func encode(_ value: Int8) throws { array.elements.append(.integer(value)) }
    mutating func encode(_ value: Int16) throws { array.elements.append(.integer(value)) }
    mutating func encode(_ value: Int32) throws { array.elements.append(.integer(value)) }
    mutating func encode(_ value: Int64) throws { array.elements.append(.integer(value)) }
    mutating func encode(_ value: UInt) throws { array.elements.append(.integer(value)) }
    mutating func encode(_ value: UInt8) throws { array.elements.append(.integer(value)) }
    mutating func encode(_ value: UInt16) throws { array.elements.append(.integer(value)) }
    mutating func encode(_ value: UInt32) throws { array.elements.append(.integer(value)) }
    mutating func encode(_ value: UInt64) throws { array.elements.append(.integer(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        array.elements.append(try ValueEncoder.encoded(value, run: run, codingPath: nextPath))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodedObject()
        let path = nextPath
        array.elements.append(.object(nested))
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(run: run, object: nested, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = EncodedArray()
        let path = nextPath
        array.elements.append(.array(nested))
        return UnkeyedContainer(run: run, array: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        run.leave("a superEncoder")
        return ValueEncoder(run: run, codingPath: codingPath)
    }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let encoder: ValueEncoder

    var codingPath: [any CodingKey] { encoder.codingPath }

    func encodeNil() throws { encoder.value = .null }
    func encode(_ value: Bool) throws { encoder.value = .bool(value) }
    func encode(_ value: String) throws { encoder.value = .string(value) }
    func encode(_ value: Double) throws { encoder.run.leave(formatted: Double.self) }
    func encode(_ value: Float) throws { encoder.run.leave(formatted: Float.self) }
    func encode(_ value: Int) throws { encoder.value = .integer(value) }
    func encode(_ value: Int8) throws { encoder.value = .integer(value) }
    func encode(_ value: Int16) throws { encoder.value = .integer(value) }
    func encode(_ value: Int32) throws { encoder.value = .integer(value) }
    func encode(_ value: Int64) throws { encoder.value = .integer(value) }
    func encode(_ value: UInt) throws { encoder.value = .integer(value) }
    func encode(_ value: UInt8) throws { encoder.value = .integer(value) }
    func encode(_ value: UInt16) throws { encoder.value = .integer(value) }
    func encode(_ value: UInt32) throws { encoder.value = .integer(value) }
    func encode(_ value: UInt64) throws { encoder.value = .integer(value) }
    func encode<T: Encodable>(_ value: T) throws { try encoder.store(value) }
}

/// The coding key of an unkeyed container's element (for `codingPath`).
private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}
