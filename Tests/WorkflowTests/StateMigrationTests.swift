import Foundation
import Testing
import Workflow

/// A note whose state gained a field in version 2; version 1 snapshots hold only the text.
struct NoteWorkflow: StateMigrating, Sendable {
    static var stableTypeName: String { "Note" }
    static var stateVersion: Int { 2 }

    struct State: Codable, Equatable, Sendable {
        var text: String
        var pinned: Bool
    }

    struct MigrationFailed: Error {}

    func makeInitialState() -> State { State(text: "", pinned: false) }

    func render(state: State, context: RenderContext<NoteWorkflow>) -> State { state }

    static func migrateState(from data: Data, version: Int) throws -> State {
        struct Version1: Decodable { var text: String }
        guard version == 1 else { throw MigrationFailed() }
        return State(text: try JSONDecoder().decode(Version1.self, from: data).text, pinned: false)
    }
}

/// Snapshots of older state versions are migrated; newer or unreadable ones are rejected with the
/// reason, never read as something else.
@Suite struct StateMigrationTests {
    func restored(version: Int, state: String) async -> (NoteWorkflow.State, [RecordingObserver.Event]) {
        let observer = RecordingObserver()
        let snapshot = TreeSnapshot(workflowType: "Note", stateVersion: version, state: Data(state.utf8))
        let host = WorkflowHost(workflow: NoteWorkflow(), observers: [observer], snapshot: snapshot)
        let rendering = host.rendering
        await host.stop()
        return (rendering, observer.events.filter { if case .snapshotRejected = $0 { true } else { false } })
    }

    @Test("a version 1 snapshot restores through the migration, keeping its text")
    func olderVersionMigrates() async {
        let (state, rejected) = await restored(version: 1, state: #"{"text":"hello"}"#)
        #expect(state == NoteWorkflow.State(text: "hello", pinned: false))
        #expect(rejected.isEmpty)
    }

    @Test("a snapshot of today's version decodes as it is")
    func currentVersionDecodes() async {
        let (state, rejected) = await restored(version: 2, state: #"{"text":"hi","pinned":true}"#)
        #expect(state == NoteWorkflow.State(text: "hi", pinned: true))
        #expect(rejected.isEmpty)
    }

    @Test("a newer version, or an old one the migration cannot read, is rejected with the reason")
    func newerOrUnreadableIsRejected() async {
        let (newer, newerRejected) = await restored(version: 3, state: #"{"text":"x","pinned":true,"color":"red"}"#)
        #expect(newer == NoteWorkflow().makeInitialState())
        #expect(newerRejected == [.snapshotRejected(path: "/Note", reason: "snapshot of Note has state version 3, expected 2")])
        let (_, unreadable) = await restored(version: 1, state: #"{"body":"x"}"#)
        guard case .snapshotRejected(_, let reason) = unreadable.first else {
            Issue.record("the unreadable version 1 snapshot was not rejected")
            return
        }
        #expect(reason.contains("migrating from state version 1"), "\(reason)")
    }
}
