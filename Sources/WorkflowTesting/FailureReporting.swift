import Testing

/// Records a test failure at `sourceLocation`.
///
/// Every tester failure goes through here so that they all surface the same way: as a Swift
/// Testing issue pointing at the caller's line (the `render`, `expect…` or `assert…` call), not
/// at a line inside this module.
func recordFailure(_ message: String, at sourceLocation: SourceLocation) {
    Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
}
