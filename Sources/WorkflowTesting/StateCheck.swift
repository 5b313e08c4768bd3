/// The state checks both testers offer for `Equatable` states (`assert(state:)`,
/// `assertStateModifications`), written once.
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
            recordFailure("State \(state) is not equal to the expected \(expected).", file: file, line: line)
        }
    }

    /// Records a failure unless the state equals the baseline changed by `modifications`.
    func assertModifications(file: StaticString, line: UInt, _ modifications: (inout State) throws -> Void) rethrows {
        var expected = baseline
        try modifications(&expected)
        if state != expected {
            recordFailure(
                "State \(state) does not match the \(baselineName) with the expected modifications, \(expected).",
                file: file, line: line)
        }
    }
}
