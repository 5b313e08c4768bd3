extension JSONDelta {
    /// `value` with the changes applied; throws when the delta was not computed from a value of
    /// that shape (a path, a field or a key it names is not there).
    package func applied(to value: JSONValue) throws(JSONDeltaError) -> JSONValue {
        var result = value
        for operation in operations { try Self.apply(operation, to: &result) }
        return result
    }

    private static func apply(_ operation: Operation, to root: inout JSONValue) throws(JSONDeltaError) {
        switch operation {
        case .replace(let path, let value):
            try update(&root, at: path[...]) { (target: inout JSONValue) throws(JSONDeltaError) in target = value }
        case .add(let path, let value):
            try updateParent(&root, of: path) { (object: inout [String: JSONValue], field: String) throws(JSONDeltaError) in
                object[field] = value
            }
        case .remove(let path):
            try updateParent(&root, of: path) { (object: inout [String: JSONValue], field: String) throws(JSONDeltaError) in
                guard object.removeValue(forKey: field) != nil else { throw JSONDeltaError("no field \"\(field)\" to remove") }
            }
        case .keyed(let path, let changes):
            try update(&root, at: path[...]) { (target: inout JSONValue) throws(JSONDeltaError) in
                guard case .array(let elements) = target else { throw JSONDeltaError("a keyed change to \(target.kind), not an array") }
                target = .array(try apply(changes, to: elements))
            }
        }
    }

    private static func apply(_ changes: KeyedChanges, to elements: [JSONValue]) throws(JSONDeltaError) -> [JSONValue] {
        var byKey: [KeyIdentity: JSONValue] = [:]
        for element in elements {
            guard let key = key(of: element, by: changes.keyField) else {
                throw JSONDeltaError("an element without a key \(changes.keyField.map { "\"\($0)\"" } ?? "string")")
            }
            byKey[KeyIdentity(key)] = element
        }
        var leaving = Set(changes.removed.map(KeyIdentity.init))
        for key in changes.removed where byKey[KeyIdentity(key)] == nil { throw JSONDeltaError("no element keyed \(key.bytesText) to remove") }
        for placement in changes.placed where placement.value == nil { leaving.insert(KeyIdentity(placement.key)) }
        var result = elements.filter { element in key(of: element, by: changes.keyField).map { !leaving.contains(KeyIdentity($0)) } ?? false }
        for placement in changes.placed {
            let element: JSONValue
            if let value = placement.value {
                element = value
            } else {
                guard let moving = byKey[KeyIdentity(placement.key)] else { throw JSONDeltaError("no element keyed \(placement.key.bytesText) to move") }
                element = moving
            }
            var position = 0
            if let after = placement.after {
                let anchor = KeyIdentity(after)
                guard let index = result.firstIndex(where: { key(of: $0, by: changes.keyField).map(KeyIdentity.init) == anchor }) else {
                    throw JSONDeltaError("no element keyed \(after.bytesText) to place after")
                }
                position = index + 1
            }
            result.insert(element, at: position)
        }
        for (key, operations) in changes.changed {
            let identity = KeyIdentity(key)
            guard let index = result.firstIndex(where: { Self.key(of: $0, by: changes.keyField).map(KeyIdentity.init) == identity }) else {
                throw JSONDeltaError("no element keyed \(key.bytesText) to change")
            }
            result[index] = try JSONDelta(operations: operations).applied(to: result[index])
        }
        return result
    }

    /// Runs `body` on the value at `path` inside `value`.
    private static func update(
        _ value: inout JSONValue, at path: ArraySlice<Step>, _ body: (inout JSONValue) throws(JSONDeltaError) -> Void
    ) throws(JSONDeltaError) {
        guard let step = path.first else { return try body(&value) }
        switch (step, value) {
        case (.field(let field), .object(var object)):
            guard var child = object[field] else { throw JSONDeltaError("no field \"\(field)\" on the path") }
            try update(&child, at: path.dropFirst(), body)
            object[field] = child
            value = .object(object)
        case (.index(let index), .array(var array)):
            guard array.indices.contains(index) else { throw JSONDeltaError("no element \(index) on the path") }
            try update(&array[index], at: path.dropFirst(), body)
            value = .array(array)
        default:
            throw JSONDeltaError("a path step into \(value.kind)")
        }
    }

    /// Runs `body` on the object holding the field `path` ends with.
    private static func updateParent(
        _ value: inout JSONValue, of path: [Step], _ body: (inout [String: JSONValue], String) throws(JSONDeltaError) -> Void
    ) throws(JSONDeltaError) {
        guard case .field(let field) = path.last else { throw JSONDeltaError("a field change whose path does not end with a field") }
        try update(&value, at: path.dropLast()) { (parent: inout JSONValue) throws(JSONDeltaError) in
            guard case .object(var object) = parent else { throw JSONDeltaError("a field change in \(parent.kind)") }
            try body(&object, field)
            parent = .object(object)
        }
    }
}

extension JSONValue {
    /// The value as JSON text, for an error's words.
    var bytesText: String { String(decoding: bytes, as: UTF8.self) }
}
