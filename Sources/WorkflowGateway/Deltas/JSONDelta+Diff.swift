extension JSONDelta {
    /// The changes that make `old` into `new`: none when they are equal.
    package static func between(_ old: JSONValue, _ new: JSONValue) -> JSONDelta {
        var operations: [Operation] = []
        diff(old, new, at: [], into: &operations)
        return JSONDelta(operations: operations)
    }

    private static func diff(_ old: JSONValue, _ new: JSONValue, at path: [Step], into operations: inout [Operation]) {
        guard old != new else { return }
        switch (old, new) {
        case (.object(let before), .object(let after)):
            for key in before.keys.sorted() where after[key] == nil {
                operations.append(.remove(path + [.field(key)]))
            }
            for key in after.keys.sorted() {
                guard let value = after[key] else { continue }
                if let previous = before[key] {
                    diff(previous, value, at: path + [.field(key)], into: &operations)
                } else {
                    operations.append(.add(path + [.field(key)], value))
                }
            }
        case (.array(let before), .array(let after)):
            if let keyField = keying(before, after) {
                let changes = keyedChanges(before, after, keyField: keyField)
                operations.append(.keyed(path, changes))
            } else if before.count == after.count {
                for (index, (previous, value)) in zip(before, after).enumerated() {
                    diff(previous, value, at: path + [.index(index)], into: &operations)
                }
            } else {
                operations.append(.replace(path, new))
            }
        default:
            operations.append(.replace(path, new))
        }
    }

    /// How both arrays are keyed: `.some(field)` when every element of each is an object whose
    /// `field` (`id`, else `key`) holds a distinct integer or string; `.some(nil)` when every
    /// element of each is a distinct string (sink tokens, names); `nil`: not keyed (an empty
    /// array takes the other's keying).
    static func keying(_ before: [JSONValue], _ after: [JSONValue]) -> String?? {
        let candidates: [String?] = ["id", "key", nil]
        return candidates.first { field in keys(of: before, by: field) != nil && keys(of: after, by: field) != nil }
    }

    /// The keys of `elements` by `field` (`nil`: the elements themselves), if each has a
    /// distinct one.
    static func keys(of elements: [JSONValue], by field: String?) -> [JSONValue]? {
        var keys: [JSONValue] = []
        keys.reserveCapacity(elements.count)
        var seen = Set<KeyIdentity>()
        for element in elements {
            guard let key = key(of: element, by: field), seen.insert(KeyIdentity(key)).inserted else { return nil }
            keys.append(key)
        }
        return keys
    }

    /// The key of one element by `field` (`nil`: a string is its own key).
    static func key(of element: JSONValue, by field: String?) -> JSONValue? {
        guard let field else {
            if case .string = element { return element }
            return nil
        }
        guard case .object(let object) = element, let key = object[field], key.isKey else { return nil }
        return key
    }

    /// The changes from `before` to `after`, both keyed by `keyField`: removals, then each
    /// element not in the longest run kept in order placed after its predecessor in `after`,
    /// then the changes inside elements that stay.
    private static func keyedChanges(_ before: [JSONValue], _ after: [JSONValue], keyField: String?) -> KeyedChanges {
        let oldKeys = keys(of: before, by: keyField) ?? []
        let newKeys = keys(of: after, by: keyField) ?? []
        var oldIndex: [KeyIdentity: Int] = [:]
        for (index, key) in oldKeys.enumerated() { oldIndex[KeyIdentity(key)] = index }
        let newSet = Set(newKeys.map(KeyIdentity.init))
        var changes = KeyedChanges(keyField: keyField)
        changes.removed = oldKeys.filter { !newSet.contains(KeyIdentity($0)) }

        // The kept elements, in the new order, by their old positions: the longest increasing run
        // of those positions stays where it is; every other kept element moves.
        let kept = newKeys.enumerated().compactMap { newPosition, key in oldIndex[KeyIdentity(key)].map { (newPosition, $0) } }
        let staying = Set(longestIncreasingRun(kept.map(\.1)).map { kept[$0].0 })
        for (position, key) in newKeys.enumerated() where !staying.contains(position) {
            let previous = position == 0 ? nil : newKeys[position - 1]
            let isKept = oldIndex[KeyIdentity(key)] != nil
            changes.placed.append(Placement(key: key, after: previous, value: isKept ? nil : after[position]))
        }
        for (position, key) in newKeys.enumerated() {
            guard let old = oldIndex[KeyIdentity(key)] else { continue }
            var inner: [Operation] = []
            diff(before[old], after[position], at: [], into: &inner)
            if !inner.isEmpty { changes.changed.append((key, inner)) }
        }
        return changes
    }

    /// The indices (into `values`) of one longest strictly increasing subsequence of `values`.
    static func longestIncreasingRun(_ values: [Int]) -> [Int] {
        var tails: [Int] = []  // index into `values` of the smallest tail of each run length
        var previous = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var run: [Int] = []
        var index = tails.last ?? -1
        while index >= 0 {
            run.append(index)
            index = previous[index]
        }
        return run.reversed()
    }
}

/// A key compared as the client compares it: the integer 3 and the string "3" are different keys.
struct KeyIdentity: Hashable {
    let text: String
    let isString: Bool

    init(_ key: JSONValue) {
        switch key {
        case .string(let string): (text, isString) = (string, true)
        case .integer(let integer): (text, isString) = (String(integer), false)
        default: (text, isString) = ("", false)
        }
    }
}
