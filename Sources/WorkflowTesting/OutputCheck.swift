/// The output checks both testers offer (`verifyOutput`, `assertNoOutput`, `assert(output:)`),
/// written once: a render result and an action tester each check one optional output, reported
/// by something a message names.
///
/// Messages start with workflow-swift's words ("No output was produced", "Expected no output,
/// but got …", a line diff for unequal outputs), which tests written for it match, then say who
/// reported the output.
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
            recordFailure("Expected no output, but got \(output) (reported by \(reporter)).", file: file, line: line)
        }
    }
}

extension OutputCheck where Output: Equatable {
    /// Records a failure unless the output is exactly `expected`.
    func assertEqual(to expected: Output, file: StaticString, line: UInt) {
        guard let output else {
            return recordFailure(
                "No output was produced: expected \(expected), but \(reporter) reported none.", file: file, line: line)
        }
        if output != expected {
            recordFailure(
                LineDifference(actual: output, expected: expected).message(subject: "Output") + "\nReported by \(reporter).",
                file: file, line: line)
        }
    }
}
