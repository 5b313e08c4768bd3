/// A line-by-line difference of two values' dumps, worded as workflow-swift's testers word
/// equality failures: "State (First) does not match the expected state (Second) - Difference: …",
/// the differing lines marked `−` (first, the actual value) and `+` (second, the expected one),
/// then "(First: −, Second: +)".
///
/// Tests written against workflow-swift match those words, so the wording is kept; the diff is
/// this package's own (a longest-common-subsequence of lines, see ``ValueDump``).
struct LineDifference {
    /// The actual value's dump.
    let first: String
    /// The expected value's dump.
    let second: String

    init(actual: Any, expected: Any) {
        first = ValueDump.dump(actual)
        second = ValueDump.dump(expected)
    }

    /// The failure message: "`Subject` (First) does not match the expected `subject` (Second) -
    /// Difference: …" followed by the marked lines.
    func message(subject: String) -> String {
        "\(subject) (First) does not match the expected \(subject.lowercased()) (Second) - Difference: …\n\n"
            + markedLines().map { "  " + $0 }.joined(separator: "\n")
            + "\n\n(First: −, Second: +)"
    }

    /// Every line of both dumps, in order: common ones indented, the first's own marked `−`,
    /// the second's own marked `+`.
    func markedLines() -> [String] {
        let old = first.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let new = second.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // lengths[i][j]: the longest common subsequence of old[i...] and new[j...].
        var lengths = Array(repeating: Array(repeating: 0, count: new.count + 1), count: old.count + 1)
        for i in stride(from: old.count - 1, through: 0, by: -1) {
            for j in stride(from: new.count - 1, through: 0, by: -1) {
                lengths[i][j] = old[i] == new[j] ? lengths[i + 1][j + 1] + 1 : max(lengths[i + 1][j], lengths[i][j + 1])
            }
        }
        var lines: [String] = []
        var i = 0
        var j = 0
        while i < old.count || j < new.count {
            if i < old.count, j < new.count, old[i] == new[j] {
                lines.append("  " + old[i])
                i += 1
                j += 1
            } else if j < new.count, i == old.count || lengths[i][j + 1] >= lengths[i + 1][j] {
                lines.append("+ " + new[j])
                j += 1
            } else {
                lines.append("\u{2212} " + old[i])
                i += 1
            }
        }
        // custom-dump lists a changed line's removal before its addition.
        return reorderedRemovalsFirst(lines)
    }

    /// Within each run of changed lines, the `−` lines before the `+` lines.
    private func reorderedRemovalsFirst(_ lines: [String]) -> [String] {
        var result: [String] = []
        var removals: [String] = []
        var additions: [String] = []
        func flush() {
            result += removals + additions
            removals = []
            additions = []
        }
        for line in lines {
            if line.hasPrefix("\u{2212}") {
                removals.append(line)
            } else if line.hasPrefix("+") {
                additions.append(line)
            } else {
                flush()
                result.append(line)
            }
        }
        flush()
        return result
    }
}
