/// The known key an unknown one was most likely meant to be, for "did you mean …?".
///
/// An operator who typed `gatway` wants to read `gateway`, not a list of every key: the closest
/// known key by edit distance (insertions, deletions, substitutions and swaps of neighbours), if
/// it is close enough to be a typo rather than another word.
enum ClosestKey {
    /// The key of `known` nearest to `typed`, or `nil` when none is within a typo's reach
    /// (a third of the typed key's length, at least 1, at most 3 edits).
    static func to(_ typed: String, among known: [String]) -> String? {
        let reach = min(3, max(1, typed.count / 3))
        let ranked = known.map { ($0, distance(typed.lowercased(), $0.lowercased())) }.filter { $0.1 <= reach }
        return ranked.min { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 < $1.0) }?.0
    }

    /// The optimal string alignment distance between `a` and `b`.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
