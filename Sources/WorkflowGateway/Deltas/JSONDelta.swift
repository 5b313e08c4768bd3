import Foundation

/// The changes from one rendering to the next, as the rendering stream sends them after a first
/// whole frame (docs/WIRE-PROTOCOL.md, "Rendering deltas", version `JSONDelta.version`).
///
/// A page's screen changes a little per event (a row selected, a field typed), so sending only
/// what changed keeps a click's bytes small whatever the size of the screen. The changes are
/// values replaced, object fields added or removed, and arrays of keyed elements (objects with
/// an `id`, else a `key`, or distinct strings such as sink tokens) changed by key: elements
/// removed, inserted or moved after another key, and elements changed in place — so a row that
/// moved costs its key, not the rows after it. `between(_:_:)` computes them,
/// `applied(to:)` applies them (the client library mirrors it in JavaScript), and `wire` is
/// their JSON form.
package struct JSONDelta: Sendable, Equatable {
    /// The delta format's version: a client asks for it (`?deltas=1`) and a stream that speaks it
    /// says so in its first frame (`"deltas": 1`).
    package static let version = 1

    /// One step of a path: an object's field, or an element of an array that is not keyed.
    package enum Step: Sendable, Equatable {
        case field(String)
        case index(Int)
    }

    /// Where an inserted or moved element goes: right after the element keyed `after`, or first
    /// (`nil`). Placements apply in order, so `after` is an element already in place.
    package struct Placement: Sendable, Equatable {
        package var key: JSONValue
        package var after: JSONValue?
        /// The inserted element; `nil`: the element of that key moves.
        package var value: JSONValue?
    }

    /// The changes to one keyed array: what is removed, where elements are inserted or moved,
    /// and the changes inside elements that stay.
    package struct KeyedChanges: Sendable, Equatable {
        /// The field keying the elements (`id` or `key`); `nil`: the elements are their own keys.
        package var keyField: String?
        package var removed: [JSONValue] = []
        package var placed: [Placement] = []
        /// Changes inside the element of each key, relative to that element.
        package var changed: [(key: JSONValue, operations: [Operation])] = []

        package static func == (lhs: KeyedChanges, rhs: KeyedChanges) -> Bool {
            lhs.keyField == rhs.keyField && lhs.removed == rhs.removed && lhs.placed == rhs.placed
                && lhs.changed.elementsEqual(rhs.changed) { $0.key == $1.key && $0.operations == $1.operations }
        }
    }

    /// One change at a path of the value.
    package enum Operation: Sendable, Equatable {
        /// The value at `path` (the whole value when empty) becomes `value`.
        case replace([Step], JSONValue)
        /// The object at the path's parent gains the field the path ends with.
        case add([Step], JSONValue)
        /// The object at the path's parent loses the field the path ends with.
        case remove([Step])
        /// The keyed array at the path changes by key.
        case keyed([Step], KeyedChanges)
    }

    package var operations: [Operation]

    package init(operations: [Operation]) {
        self.operations = operations
    }

    /// Whether nothing changed.
    package var isEmpty: Bool { operations.isEmpty }
}
