/// Why a delta could not be read or applied: a delta is applied to the value it was computed
/// from, so either says the two sides disagree (the client then asks for a whole frame).
package struct JSONDeltaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where in the delta or the value, in words.
    package var description: String

    package init(_ description: String) {
        self.description = description
    }
}
