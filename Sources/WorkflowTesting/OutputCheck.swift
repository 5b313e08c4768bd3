/// The output checks both testers offer (`verifyOutput`, `assertNoOutput`, `assert(output:)`),
/// written once: a render result and an action tester each check one optional output, reported
/// by something a message names.
struct OutputCheck<Output> {
    /// The output to check, `nil` when none was reported.
    let output: Output?
    /// Who reported it, for messages: "ParentWorkflow", "the last action".
    let reporter: String

    /// Runs `assertions` on the output, or records that there was none.
    func verify(file: StaticString, line: UInt, _ assertions: (Output) throws -> Void) rethrows {
        guard let output else {
            return recordFailure("No output was produced: \(reporter) reported none.", file: file, line: line)
        }
        try assertions(output)
    }

    /// Records a failure if there is an output.
    func assertNone(file: StaticString, line: UInt) {
        if let output {
            recordFailure("Expected no output, but \(reporter) reported \(output).", file: file, line: line)
        }
    }
}

extension OutputCheck where Output: Equatable {
    /// Records a failure unless the output is exactly `expected`.
    func assertEqual(to expected: Output, file: StaticString, line: UInt) {
        guard let output else {
            return recordFailure("Expected the output \(expected), but \(reporter) reported none.", file: file, line: line)
        }
        if output != expected {
            recordFailure("Output \(output) is not equal to the expected \(expected).", file: file, line: line)
        }
    }
}
