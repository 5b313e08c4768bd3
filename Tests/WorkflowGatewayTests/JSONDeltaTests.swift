import Foundation
import RemoteTestSupport
import Testing
@testable import WorkflowGateway

/// The rendering stream's diff: what it sends for each kind of change, that applying what it
/// sends (after the wire's round trip) always gives the new value, and what it costs.
@Suite("JSON deltas")
struct JSONDeltaTests {
    static func value(_ text: String) throws -> JSONValue {
        try #require(JSONValue(json: Data(text.utf8)))
    }

    /// The delta from `old` to `new` after a trip through its JSON bytes, and the value it makes.
    static func roundTrip(_ old: JSONValue, _ new: JSONValue) throws -> (JSONDelta, JSONValue) {
        let delta = JSONDelta.between(old, new)
        let read = try JSONDelta(wire: try #require(JSONValue(json: delta.wire.bytes)))
        #expect(read == delta)
        return (delta, try read.applied(to: old))
    }

    @Test("equal values: no operations; a changed scalar: one replace at its path; fields added and removed by name")
    func scalarsAndFields() throws {
        let old = try Self.value(#"{"a":1,"b":{"c":"x","d":true},"gone":null}"#)
        #expect(JSONDelta.between(old, old).isEmpty)
        let new = try Self.value(#"{"a":1,"b":{"c":"y","d":true},"new":[1]}"#)
        let (delta, applied) = try Self.roundTrip(old, new)
        #expect(applied == new)
        #expect(
            delta.operations == [
                .remove([.field("gone")]), .replace([.field("b"), .field("c")], .string("y")), .add([.field("new")], .array([.integer(1)])),
            ])
    }

    @Test("a keyed list: one row changed in place is one change by its key; removed, inserted and moved rows by key, not by index")
    func keyedRows() throws {
        let old = try Self.value(#"{"rows":[{"id":1,"s":false},{"id":2,"s":false},{"id":3,"s":false},{"id":4,"s":false}]}"#)
        let selected = try Self.value(#"{"rows":[{"id":1,"s":false},{"id":2,"s":true},{"id":3,"s":false},{"id":4,"s":false}]}"#)
        let (delta, applied) = try Self.roundTrip(old, selected)
        #expect(applied == selected)
        var changes = JSONDelta.KeyedChanges(keyField: "id")
        changes.changed = [(.integer(2), [.replace([.field("s")], .bool(true))])]
        #expect(delta.operations == [.keyed([.field("rows")], changes)])

        // 1 removed, 5 inserted first, 4 moved after 2.
        let reordered = try Self.value(#"{"rows":[{"id":5,"s":false},{"id":2,"s":false},{"id":4,"s":false},{"id":3,"s":false}]}"#)
        let (moves, result) = try Self.roundTrip(old, reordered)
        #expect(result == reordered)
        guard case .keyed(_, let keyed) = try #require(moves.operations.first) else { throw JSONDeltaError("not keyed") }
        #expect(keyed.removed == [.integer(1)])
        #expect(keyed.placed.count == 2, "5 inserted, and one of 3 and 4 moved: \(keyed.placed)")
        #expect(keyed.placed.first == JSONDelta.Placement(key: .integer(5), after: nil, value: try Self.value(#"{"id":5,"s":false}"#)))
    }

    @Test("lists keyed by \"key\", lists of distinct strings (sink tokens), and unkeyed lists of the same or another length")
    func otherLists() throws {
        let pairs: [(String, String)] = [
            (#"[{"key":"a","v":1},{"key":"b","v":2}]"#, #"[{"key":"b","v":3},{"key":"c","v":1}]"#),
            (#"["t1|x","t2|y","t3|z"]"#, #"["t3|z","t1|x","t4|w"]"#),
            (#"[1,2,3]"#, #"[1,5,3]"#),
            (#"[1,2,3]"#, #"[1,2]"#),
            (#"[{"id":1},{"id":1}]"#, #"[{"id":1},{"id":2}]"#),
            (#"[]"#, #"[{"id":1}]"#),
            (#"{"a":[{"id":1}]}"#, #"{"a":[]}"#),
            (#"{"a":1}"#, #"[1]"#),
        ]
        for (before, after) in pairs {
            let (_, applied) = try Self.roundTrip(try Self.value(before), try Self.value(after))
            #expect(applied == (try Self.value(after)), "\(before) → \(after)")
        }
        let (tokens, _) = try Self.roundTrip(try Self.value(#"["t1|x","t2|y","t3|z"]"#), try Self.value(#"["t3|z","t1|x","t4|w"]"#))
        guard case .keyed(_, let keyed) = try #require(tokens.operations.first) else { throw JSONDeltaError("not keyed") }
        #expect(keyed.keyField == nil && keyed.removed == [.string("t2|y")])
    }

    @Test("random trees with keyed lists, changed at random: applying the delta read from its bytes always gives the new tree (2,000 pairs)")
    func randomTrees() throws {
        var random = SplitMix64(seed: 41)
        for round in 0..<2_000 {
            let old = RandomJSON.tree(depth: 3, &random)
            let new = RandomJSON.changed(old, depth: 3, &random)
            let (_, applied) = try Self.roundTrip(old, new)
            #expect(applied == new, "round \(round): \(old.bytesText) → \(new.bytesText)")
            if applied != new { return }
        }
    }

    @Test("a delta that does not fit the value is refused in words: a missing key, field or path; bad wire forms too")
    func refusals() throws {
        let value = try Self.value(#"{"rows":[{"id":1}],"n":1}"#)
        let bad: [String] = [
            #"[{"op":"remove","path":["missing"]}]"#,
            #"[{"op":"replace","path":["x","y"],"value":1}]"#,
            #"[{"op":"keyed","path":["rows"],"by":"id","remove":[7]}]"#,
            #"[{"op":"keyed","path":["n"],"by":"id"}]"#,
            #"[{"op":"keyed","path":["rows"],"by":"id","place":[{"key":2,"after":9,"value":{"id":2}}]}]"#,
            #"[{"op":"replace","path":["rows",3],"value":1}]"#,
        ]
        for text in bad {
            let delta = try JSONDelta(wire: try Self.value(text))
            #expect(throws: JSONDeltaError.self, "\(text)") { try delta.applied(to: value) }
        }
        for text in [#"{"op":"add"}"#, #"[{"op":"jump","path":[]}]"#, #"[{"op":"add","path":[]}]"#, #"[{"op":"remove","path":[true]}]"#, #"[{"op":"keyed","path":[],"remove":[[1]]}]"#] {
            #expect(throws: JSONDeltaError.self, "\(text)") { try JSONDelta(wire: try Self.value(text)) }
        }
    }

    /// The vectors the client library's applier is checked against in a real browser (the email
    /// browser's `DeltaBrowserTests`): old value, operations, new value, as this diff makes them.
    static let vectorsPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/json-delta-vectors.json")

    static func vectors() throws -> JSONValue {
        var random = SplitMix64(seed: 4141)
        var vectors: [JSONValue] = []
        for _ in 0..<300 {
            let old = RandomJSON.tree(depth: 3, &random)
            let new = RandomJSON.changed(old, depth: 3, &random)
            vectors.append(.object(["old": old, "ops": JSONDelta.between(old, new).wire, "new": new]))
        }
        return .array(vectors)
    }

    @Test("the committed vectors (Tests/Fixtures/json-delta-vectors.json) are what this diff computes (WORKFLOW_WRITE_DELTA_VECTORS=1 rewrites them)")
    func vectorsAreCurrent() throws {
        let vectors = try Self.vectors()
        var text = vectors.bytes
        text.append(0x0A)
        if ProcessInfo.processInfo.environment["WORKFLOW_WRITE_DELTA_VECTORS"] == "1" {
            try text.write(to: Self.vectorsPath)
        }
        let committed = try Data(contentsOf: Self.vectorsPath)
        #expect(JSONValue(json: committed) == vectors, "rewrite them with WORKFLOW_WRITE_DELTA_VECTORS=1")
    }

    @Test("one changed row of a 1,000-row keyed list costs at most 2 % of the whole frame's bytes")
    func thousandRows() throws {
        let figure = try DeltaFigures.thousandRows()
        print("deltas: one changed row of a 1,000-row keyed list: \(figure.delta) B delta, \(figure.whole) B whole frame (\(figure.percent) %)")
        #expect(figure.delta * 50 <= figure.whole, "\(figure)")
    }
}

/// The bytes of one changed row in a 1,000-row list, beside the whole list's (for the test and
/// for `scripts/bench-deltas.sh`).
enum DeltaFigures {
    static func thousandRows() throws -> (delta: Int, whole: Int, percent: String) {
        func rows(selected: Int) -> JSONValue {
            .object([
                "rows": .array(
                    (0..<1_000).map { id in
                        .object([
                            "id": .integer(Int64(id)), "subject": .string("Message #\(id): quarterly planning notes"),
                            "selected": .bool(id == selected), "onSelect": .string("inbox.rows.\(id)@a1b2c3"),
                        ])
                    })
            ])
        }
        let before = rows(selected: 10)
        let after = rows(selected: 500)
        let delta = JSONDelta.between(before, after).wire.bytes.count
        let whole = after.bytes.count
        return (delta, whole, String(format: "%.2f", Double(delta) * 100 / Double(whole)))
    }
}

/// Random JSON trees (objects, keyed and unkeyed lists, scalars) and random changes to them.
enum RandomJSON {
    static func scalar(_ random: inout SplitMix64) -> JSONValue {
        switch Int.random(in: 0..<5, using: &random) {
        case 0: .null
        case 1: .bool(Bool.random(using: &random))
        case 2: .integer(Int64.random(in: -5...5, using: &random))
        case 3: .number(Double(Int.random(in: 0...8, using: &random)) + 0.25)
        default: .string(["a", "b", "tok|1", "ü"].randomElement(using: &random)!)
        }
    }

    static func tree(depth: Int, _ random: inout SplitMix64) -> JSONValue {
        guard depth > 0 else { return scalar(&random) }
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            return scalar(&random)
        case 1:
            var object: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                object[["a", "b", "c", "d", "e"].randomElement(using: &random)!] = tree(depth: depth - 1, &random)
            }
            return .object(object)
        case 2:
            let ids = Array((0..<8).shuffled(using: &random).prefix(Int.random(in: 0...6, using: &random)))
            return .array(ids.map { .object(["id": .integer(Int64($0)), "v": tree(depth: depth - 1, &random)]) })
        default:
            return .array((0..<Int.random(in: 0...3, using: &random)).map { _ in tree(depth: depth - 1, &random) })
        }
    }

    /// `value` with some parts changed: fields added, removed or changed; keyed rows removed,
    /// inserted, moved and changed; or replaced outright.
    static func changed(_ value: JSONValue, depth: Int, _ random: inout SplitMix64) -> JSONValue {
        if Int.random(in: 0..<6, using: &random) == 0 { return tree(depth: depth, &random) }
        switch value {
        case .object(var object):
            for key in object.keys.sorted() where Bool.random(using: &random) {
                object[key] = Bool.random(using: &random) ? changed(object[key]!, depth: depth - 1, &random) : nil
            }
            if Bool.random(using: &random) { object["z"] = tree(depth: depth - 1, &random) }
            return .object(object)
        case .array(var elements):
            elements = elements.map { Int.random(in: 0..<3, using: &random) == 0 ? keptKey($0, changed($0, depth: depth - 1, &random)) : $0 }
            if Bool.random(using: &random) { elements.shuffle(using: &random) }
            if !elements.isEmpty, Bool.random(using: &random) { elements.remove(at: Int.random(in: 0..<elements.count, using: &random)) }
            if Bool.random(using: &random), elements.allSatisfy({ JSONDelta.key(of: $0, by: "id") != nil }) {
                let used = Set(elements.compactMap { JSONDelta.key(of: $0, by: "id") }.map { $0.bytesText })
                if let free = (0..<12).first(where: { !used.contains("\($0)") }) {
                    elements.insert(
                        .object(["id": .integer(Int64(free)), "v": tree(depth: depth - 1, &random)]),
                        at: Int.random(in: 0...elements.count, using: &random))
                }
            }
            return .array(elements)
        default:
            return Bool.random(using: &random) ? scalar(&random) : value
        }
    }

    /// `new`, keeping `old`'s `id` when `old` had one (a row changed, not replaced by another).
    static func keptKey(_ old: JSONValue, _ new: JSONValue) -> JSONValue {
        guard case .object(let before) = old, let id = before["id"], case .object(var after) = new else { return new }
        after["id"] = id
        return .object(after)
    }
}
