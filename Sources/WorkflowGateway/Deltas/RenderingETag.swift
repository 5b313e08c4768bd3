import Foundation

/// The entity tag of a tree's rendering: its sequence, quoted (`"42"`), so a client that has
/// the latest rendering asks with `If-None-Match` and is answered 304 with no body.
///
/// A rendering's children's statuses are read when it is served, but a status change a page
/// must see comes with a new rendering (see `RenderingFeed`), so the sequence names the answer.
struct RenderingETag: Sendable, Equatable {
    var sequence: UInt64

    /// `"N"`.
    var text: String { "\"\(sequence)\"" }

    /// Whether `ifNoneMatch` (a list of tags, weak or strong, or `*`) names this one. A
    /// sequence of 0 (no rendering yet) is never matched.
    func isMatched(by ifNoneMatch: String?) -> Bool {
        guard let ifNoneMatch, sequence > 0 else { return false }
        return ifNoneMatch.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingCharacters(in: .whitespaces)[...]
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            if tag.hasPrefix("\""), tag.hasSuffix("\""), tag.count >= 2 { tag = tag.dropFirst().dropLast() }
            return UInt64(tag) == sequence
        }
    }
}
