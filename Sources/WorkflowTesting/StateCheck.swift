/// The state checks both testers offer for `Equatable` states (`assert(state:)`,
/// `assertStateModifications`), written once.
///
/// A mismatch is worded as workflow-swift words it ("State (First) does not match the expected
/// state (Second) - Difference: …" and a line diff), which tests written for it match.
struct StateCheck<State: Equatable> {
    /// The state to check.
    let state: State
    /// What `assertStateModifications` starts from.
    let baseline: State
    /// Names the baseline in messages: "rendered state", "initial state".
    let baselineName: String

    /// Records a failure unless the state equals `expected`.
    func assertEqual(to expected: State, file: StaticString, line: UInt) {
        if state != expected {
            recordFailure(LineDifference(actual: state, expected: expected).message(subject: "State"), file: file, line: line)
        }
    }

    /// Records a failure unless the state equals the baseline changed by `modifications`.
    func assertModifications(file: StaticString, line: UInt, _ modifications: (inout State) throws -> Void) rethrows {
        var expected = baseline
        try modifications(&expected)
        if state != expected {
            recordFailure(
                LineDifference(actual: state, expected: expected).message(subject: "State")
                    + "\nThe expected state is the \(baselineName) with the expected modifications.",
                file: file, line: line)
        }
    }
}
