/// One remote child's status as its tree's readers see it (`RemoteRuntime.childStatuses(tree:)`):
/// published by the loop as the status changes, read without a job on the loop.
package struct TreeChildStatus: Sendable, Equatable {
    /// Its node path in the runtime (a session's start with the session's prefix).
    package var path: String
    /// Its module-qualified type name.
    package var typeName: String
    package var status: RemoteChildStatus
}
