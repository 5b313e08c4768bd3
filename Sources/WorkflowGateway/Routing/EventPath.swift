/// The path of an event's POST, read from its bytes: `/api/events/{token}` (the shared root's)
/// or `/api/sessions/{id}/events/{token}` (a session's).
///
/// Every event takes one of these two routes, so they are matched here before Hummingbird's
/// router (`GatewayResponder`), whose trie walks a path one `Character` at a time: about a tenth
/// of a coordinator's instructions per session event went to finding this route. Only the plain
/// spelling is recognised (ASCII, no empty component, no trailing `/`); any other path, even one
/// the router would read as an event's, goes to the router, so what a path means is decided by
/// the router alone and never differs between the two.
enum EventPath: Equatable {
    /// `/api/events/{token}`.
    case shared(token: Substring)
    /// `/api/sessions/{id}/events/{token}`.
    case session(id: Substring, token: Substring)

    /// The route patterns, as the router has them (its metrics label requests by these).
    static let sharedPattern = "/api/events/{token}"
    static let sessionPattern = "/api/sessions/{id}/events/{token}"

    /// The event route `path` (the request's raw path, not percent-decoded) spells plainly, or
    /// `nil`.
    init?(_ path: String) {
        // The offsets of at most five components' bytes, each between two `/`.
        var path = path
        guard let ranges = path.withUTF8(Self.componentRanges) else { return nil }
        let utf8 = path.utf8
        let names = ranges.map { range in
            Substring(utf8[utf8.index(utf8.startIndex, offsetBy: range.lowerBound)..<utf8.index(utf8.startIndex, offsetBy: range.upperBound)])
        }
        switch names.count {
        case 3 where names[0] == "api" && names[1] == "events":
            self = .shared(token: names[2])
        case 5 where names[0] == "api" && names[1] == "sessions" && names[3] == "events":
            self = .session(id: names[2], token: names[4])
        default:
            return nil
        }
    }

    /// The byte ranges of `bytes`' components: `nil` unless it starts with `/`, is ASCII, and has
    /// one to five components, none empty (every boundary is then next to an ASCII `/`, so a
    /// `Character` boundary too).
    private static func componentRanges(_ bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>]? {
        guard bytes.first == UInt8(ascii: "/") else { return nil }
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(5)
        var start = 1
        for index in 1...bytes.count {
            if index == bytes.count || bytes[index] == UInt8(ascii: "/") {
                guard index > start, ranges.count < 5 else { return nil }
                ranges.append(start..<index)
                start = index + 1
            } else if bytes[index] >= 0x80 {
                return nil
            }
        }
        return ranges
    }
}
