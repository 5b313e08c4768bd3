extension JSONDelta {
    /// The changes as the stream sends them: an array of operations (docs/WIRE-PROTOCOL.md,
    /// "Rendering deltas"), each `{"op": …, "path": [STEP…], …}`, a step being a field's name or
    /// an index.
    package var wire: JSONValue {
        .array(operations.map(Self.wire))
    }

    private static func wire(_ operation: Operation) -> JSONValue {
        switch operation {
        case .replace(let path, let value):
            return .object(["op": .string("replace"), "path": wire(path), "value": value])
        case .add(let path, let value):
            return .object(["op": .string("add"), "path": wire(path), "value": value])
        case .remove(let path):
            return .object(["op": .string("remove"), "path": wire(path)])
        case .keyed(let path, let changes):
            var object: [String: JSONValue] = ["op": .string("keyed"), "path": wire(path)]
            if let field = changes.keyField { object["by"] = .string(field) }
            if !changes.removed.isEmpty { object["remove"] = .array(changes.removed) }
            if !changes.placed.isEmpty {
                object["place"] = .array(
                    changes.placed.map { placement in
                        var place: [String: JSONValue] = ["key": placement.key, "after": placement.after ?? .null]
                        if let value = placement.value { place["value"] = value }
                        return .object(place)
                    })
            }
            if !changes.changed.isEmpty {
                object["change"] = .array(changes.changed.map { .object(["key": $0.key, "ops": .array($0.operations.map(wire))]) })
            }
            return .object(object)
        }
    }

    private static func wire(_ path: [Step]) -> JSONValue {
        .array(
            path.map { step in
                switch step {
                case .field(let name): .string(name)
                case .index(let index): .integer(Int64(index))
                }
            })
    }

    /// Reads the wire form back (what the client library does in JavaScript); throws saying what
    /// is not as the format says.
    package init(wire: JSONValue) throws(JSONDeltaError) {
        guard case .array(let operations) = wire else { throw JSONDeltaError("the operations are \(wire.kind), not an array") }
        var read: [Operation] = []
        for operation in operations { read.append(try Self.operation(operation)) }
        self.init(operations: read)
    }

    private static func operation(_ wire: JSONValue) throws(JSONDeltaError) -> Operation {
        guard case .object(let object) = wire, case .string(let name)? = object["op"] else {
            throw JSONDeltaError("an operation that is not {\"op\": NAME, …}")
        }
        let path = try self.path(object["path"])
        switch name {
        case "replace", "add":
            guard let value = object["value"] else { throw JSONDeltaError("\(name) without a value") }
            return name == "add" ? .add(path, value) : .replace(path, value)
        case "remove":
            return .remove(path)
        case "keyed":
            var changes = KeyedChanges()
            switch object["by"] {
            case nil: changes.keyField = nil
            case .string(let field)?: changes.keyField = field
            case let other?: throw JSONDeltaError("a keyed change by \(other.kind), not a field's name")
            }
            changes.removed = try list(object["remove"]).map { (key: JSONValue) throws(JSONDeltaError) in try checkedKey(key) }
            for place in try list(object["place"]) {
                guard case .object(let placement) = place, let key = placement["key"] else { throw JSONDeltaError("a placement without a key") }
                let after = placement["after"].flatMap { $0 == .null ? nil : $0 }
                changes.placed.append(Placement(key: try checkedKey(key), after: try after.map(checkedKey), value: placement["value"]))
            }
            for change in try list(object["change"]) {
                guard case .object(let element) = change, let key = element["key"], let operations = element["ops"] else {
                    throw JSONDeltaError("an element change without its key and ops")
                }
                changes.changed.append((try checkedKey(key), try JSONDelta(wire: operations).operations))
            }
            return .keyed(path, changes)
        default:
            throw JSONDeltaError("an unknown operation \"\(name)\"")
        }
    }

    private static func path(_ wire: JSONValue?) throws(JSONDeltaError) -> [Step] {
        guard case .array(let steps)? = wire else { throw JSONDeltaError("an operation without a path") }
        var path: [Step] = []
        for step in steps {
            switch step {
            case .string(let name): path.append(.field(name))
            case .integer(let index) where index >= 0 && index <= Int64(Int32.max): path.append(.index(Int(index)))
            default: throw JSONDeltaError("a path step that is \(step.kind), not a field's name or an index")
            }
        }
        return path
    }

    private static func list(_ wire: JSONValue?) throws(JSONDeltaError) -> [JSONValue] {
        switch wire {
        case nil: return []
        case .array(let values)?: return values
        case let other?: throw JSONDeltaError("a list that is \(other.kind)")
        }
    }

    private static func checkedKey(_ key: JSONValue) throws(JSONDeltaError) -> JSONValue {
        guard key.isKey else { throw JSONDeltaError("a key that is \(key.kind), not an integer or a string") }
        return key
    }
}
