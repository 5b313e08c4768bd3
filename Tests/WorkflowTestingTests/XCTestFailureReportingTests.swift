// Deliberately no `import Testing`: that this file compiles proves the testers' source-location
// default arguments do not need it, as an XCTest suite written for workflow-swift has none.
import Workflow
import WorkflowTesting
import XCTest

/// Tester failures in an XCTest case fail that case, at the test's own file and line.
///
/// XCTest on Linux has no `XCTExpectFailure`, so each test captures the failures XCTest records
/// for it (by overriding the case's failure recording while `capturingFailures` runs) and checks
/// that the tester's failure arrived there: had the tester reported only to Swift Testing,
/// nothing would be captured.
final class XCTestFailureReportingTests: XCTestCase {
    /// A failure XCTest recorded for this case.
    struct RecordedFailure {
        let description: String
        let filePath: String
        let line: Int
    }

    private var captured: [RecordedFailure]?

    #if canImport(ObjectiveC)
    override func record(_ issue: XCTIssue) {
        guard captured != nil else { return super.record(issue) }
        captured?.append(RecordedFailure(
            description: issue.compactDescription,
            filePath: issue.sourceCodeContext.location?.fileURL.path ?? "",
            line: issue.sourceCodeContext.location?.lineNumber ?? 0))
    }
    #else
    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        guard captured != nil else {
            return super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
        }
        captured?.append(RecordedFailure(description: description, filePath: filePath, line: lineNumber))
    }
    #endif

    /// Runs `body` and returns the failures XCTest recorded for this case meanwhile (instead of
    /// failing the case with them).
    private func capturingFailures(_ body: () -> Void) -> [RecordedFailure] {
        captured = []
        body()
        defer { captured = nil }
        return captured ?? []
    }

    func testAnExpectedChildThatIsNotRenderedFailsAtTheExpectingLine() {
        let expectingLine = #line + 4
        let failures = capturingFailures {
            ParentWorkflow(showLeaf: false)
                .renderTester()
                .expectWorkflow(type: LeafWorkflow.self, key: "leaf", producingRendering: "")
                .expectWorker(GreetingLoader(name: "Ada"), key: "greeting")
                .expectWorker(Counter(limit: 3), key: "counter")
                .expectSideEffect(key: "refresh")
                .render()
        }
        XCTAssertEqual(failures.count, 1)
        XCTAssertEqual(failures.first?.line, expectingLine)
        XCTAssertEqual(failures.first?.filePath, "\(#filePath)")
        XCTAssertTrue(failures.first?.description.contains("Expected child workflow of type") ?? false, "\(failures)")
    }

    func testAnUnexpectedSideEffectFailsAtTheRenderLine() {
        var renderLine = 0
        let failures = capturingFailures {
            let tester = ParentWorkflow()
                .renderTester()
                .expectWorkflow(type: LeafWorkflow.self, key: "leaf", producingRendering: "")
                .expectWorker(GreetingLoader(name: "Ada"), key: "greeting")
                .expectWorker(Counter(limit: 3), key: "counter")
            renderLine = #line + 1
            tester.render()
        }
        XCTAssertEqual(failures.map(\.line), [renderLine])
        XCTAssertTrue(failures.first?.description.contains("Unexpected side-effect with key \"refresh\"") ?? false, "\(failures)")
    }

    func testAWrongStateFailsAtTheAssertingLine() {
        let tester = ParentWorkflow.Action.tester(withState: ParentWorkflow.State(), workflow: ParentWorkflow())
            .send(action: .bump(by: 1))
        var assertingLine = 0
        let failures = capturingFailures {
            assertingLine = #line + 1
            tester.assert(state: ParentWorkflow.State())
        }
        XCTAssertEqual(failures.map(\.line), [assertingLine])
        XCTAssertTrue(failures.first?.description.contains("State (First) does not match the expected state (Second)") ?? false, "\(failures)")
    }

    func testAPassingRenderTestRecordsNothing() {
        let failures = capturingFailures {
            ParentWorkflow()
                .renderTester()
                .expectingEverything()
                .render { $0.onBump.send(2) }
                .assert(state: ParentWorkflow.State(count: 2))
                .assert(output: 2)
        }
        XCTAssertTrue(failures.isEmpty, "\(failures)")
    }
}
