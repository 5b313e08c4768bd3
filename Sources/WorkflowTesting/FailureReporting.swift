import Testing
import XCTest

/// Where a tester failure points: the test line that called the tester.
///
/// Testers take `file: StaticString = #filePath, line: UInt = #line` (as workflow-swift's do) and
/// not Swift Testing's `SourceLocation = #_sourceLocation`, because a macro used as a default
/// argument expands at the call site and so would make every test file `import Testing`, which
/// an XCTest suite does not.
struct FailureLocation: Sendable {
    let file: StaticString
    let line: UInt

    /// The same place as a Swift Testing source location.
    ///
    /// Swift Testing wants a `module/file` identifier as well as the path; SwiftPM names a target's
    /// folder after the module, so the path's last two components are that identifier.
    var sourceLocation: SourceLocation {
        let path = "\(file)"
        let components = path.split(separator: "/")
        let fileID = components.count >= 2
            ? components.suffix(2).joined(separator: "/")
            : "Tests/\(components.last.map(String.init) ?? path)"
        return SourceLocation(fileID: fileID, filePath: path, line: max(Int(line), 1), column: 1)
    }
}

/// Records a test failure at `location` with whichever test framework runs the test.
///
/// Every tester failure goes through here so that they all surface the same way and point at the
/// caller's line (the `render`, `expect…` or `assert…` call), not at a line inside this module.
///
/// - Inside a Swift Testing test (`Test.current` is set) the failure is an `Issue`.
/// - Otherwise it is an `XCTFail` with the caller's file and line, which fails the running
///   XCTest case. Neither framework forwards the other's failures on Linux (an `Issue.record` in
///   an XCTest case, or an `XCTFail` in a `@Test`, passes silently), hence the choice.
///   The failure is also recorded as an `Issue`: when a Swift Testing run is in progress but the
///   tester was called off the test's task (from another thread), that run still sees it as an
///   issue outside any test; when no Swift Testing run is in progress, that call does nothing.
func recordFailure(_ message: String, at location: FailureLocation) {
    if Test.current != nil {
        Issue.record(Comment(rawValue: message), sourceLocation: location.sourceLocation)
        return
    }
    XCTFail(message, file: location.file, line: location.line)
    Issue.record(Comment(rawValue: message), sourceLocation: location.sourceLocation)
}

/// Records a test failure at the caller's `file` and `line`; see ``recordFailure(_:at:)``.
func recordFailure(_ message: String, file: StaticString, line: UInt) {
    recordFailure(message, at: FailureLocation(file: file, line: line))
}
