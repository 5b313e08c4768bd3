import ClusterTestSupport
import Foundation
import RemoteTestSupport
import Testing
import WireProtocol
import Workflow
import WorkflowCluster
import WorkflowClusterTesting

/// The coordinator's snapshot file: written on an interval and on SIGTERM, restored with
/// `--restore`.
@Suite("Coordinator snapshots")
struct ClusterSnapshotTests {
    /// Lines showing message `id` selected, both panes rendered by their workers.
    static func selected(_ id: Int) -> @Sendable (String) -> Bool {
        { line in
            guard let frame = ListDetailFrame.parse(line) else { return false }
            return frame.detail.id == id && frame.detail.renderedBy == "worker-2" && frame.list.renderedBy == "worker-1"
        }
    }

    @Test("a selection survives SIGTERM of the coordinator and a restart with --restore")
    func selectionSurvivesRestart() async throws {
        try await ClusterFixture.with("snapshot") { cluster in
            let file = cluster.directory.appendingPathComponent("root.snapshot").path
            // A long interval: only the write on SIGTERM can have saved the selection.
            var coordinator = try await cluster.startCoordinator([
                "--picks", "4", "--keep-serving", "--snapshot-file", file, "--snapshot-interval-ms", "600000",
            ])
            try await cluster.startWorker("worker-1")
            try await cluster.startWorker("worker-2")
            try await coordinator.stdout.first("message 4 selected", where: Self.selected(4))
            #expect(try await coordinator.terminate() == 0)
            #expect(coordinator.stderr.lines.contains { $0.contains("snapshot written") })
            #expect(FileManager.default.fileExists(atPath: file))

            coordinator = try await cluster.startCoordinator(["--restore", file])
            try await coordinator.stdout.first("message 4 selected again after the restore", where: Self.selected(4))
            #expect(coordinator.stderr.lines.contains { $0.contains("restoring the root from a snapshot") })
        }
    }

    /// The selection recorded in the snapshot file at `path`, or `nil` while there is no file
    /// (a torn file cannot be seen: writes are renamed into place).
    static func selection(inSnapshot path: String) throws -> Int? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let snapshot = try SnapshotFile.load(path)
        let state = try #require(snapshot.state, "the root's state is missing from \(path)")
        return try JSONDecoder().decode(ListDetailWorkflow.State.self, from: state).selection
    }

    /// The selections a restore of the snapshot at `path` goes through: the root's recorded
    /// selection, then the selections sent to the remote inbox and not acknowledged by its worker
    /// yet (they are part of the remote child's state and are sent again on restore). Empty
    /// while there is no file.
    static func restoredSelections(inSnapshot path: String) throws -> [Int] {
        guard let recorded = try selection(inSnapshot: path) else { return [] }
        var selections = [recorded]
        for id in try pendingSelections(in: SnapshotFile.load(path)) where selections.last != id { selections.append(id) }
        return selections
    }

    /// The mirror of a remote child's snapshot state, enough to read its pending events.
    private struct RemoteChildState: Decodable {
        struct PendingEvent: Decodable { var token: String; var bytes: Data }
        var pendingEvents: [PendingEvent]?
    }

    /// Every pending event kept in the tree under `snapshot` that decodes as a selection.
    private static func pendingSelections(in snapshot: TreeSnapshot) throws -> [Int] {
        var found: [Int] = []
        if let state = snapshot.state, let remote = try? JSONDecoder().decode(RemoteChildState.self, from: state)
        {
            for event in remote.pendingEvents ?? [] {
                found.append(try BinaryWireCodec().decode(Int.self, from: [UInt8](event.bytes)))
            }
        }
        for child in snapshot.children { found += try pendingSelections(in: child.snapshot) }
        return found
    }

    @Test("the snapshot is written on the interval: after a SIGKILL (no SIGTERM write) the restart restores it")
    func periodicSnapshotSurvivesKill() async throws {
        try await ClusterFixture.with("periodic") { cluster in
            let file = cluster.directory.appendingPathComponent("root.snapshot").path
            var coordinator = try await cluster.startCoordinator([
                "--picks", "2", "--keep-serving", "--snapshot-file", file, "--snapshot-interval-ms", "100",
            ])
            try await cluster.startWorker("worker-1")
            try await cluster.startWorker("worker-2")
            try await coordinator.stdout.first("message 2 selected", where: Self.selected(2))
            // The file has no change notification: check it until a periodic write recorded
            // the selection (bounded by the safety timeout).
            try await withSafetyTimeout("a periodic snapshot holding selection 2") {
                while try Self.selection(inSnapshot: file) != 2 { try await Task.sleep(for: .milliseconds(20)) }
            }
            coordinator.forceKill()
            #expect(try await coordinator.waitForExit() != 0)
            #expect(try Self.selection(inSnapshot: file) == 2, "the killed coordinator left no usable snapshot")

            coordinator = try await cluster.startCoordinator(["--restore", file])
            try await coordinator.stdout.first("message 2 selected after the restore", where: Self.selected(2))
        }
    }

    @Test("a corrupt or missing snapshot stops the coordinator at start, naming the file")
    func corruptSnapshotRejected() async throws {
        try await ClusterFixture.with("corrupt") { cluster in
            let file = cluster.directory.appendingPathComponent("corrupt.snapshot").path
            try Data("{not a snapshot".utf8).write(to: URL(fileURLWithPath: file))
            for path in [file, file + ".missing"] {
                let coordinator = try cluster.start("test-coordinator", ["--config", cluster.configPath, "--restore", path], label: "coordinator")
                #expect(try await coordinator.waitForExit() == 78)
                let message = coordinator.stderr.lines.joined(separator: "\n")
                #expect(message.contains("snapshot file \(path)"), "\(message)")
            }
        }
    }
}
