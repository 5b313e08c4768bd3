import Foundation
import Logging
import Workflow

/// The coordinator's store, opened before anything else starts: this process is its writer
/// (it holds the newest fencing token), the shared root's latest checkpoint, if any, is read and
/// decoded, and the sessions it holds are listed (their trees are read when a client asks).
///
/// Opened by the command before any socket is bound, so a bad path, an unopenable file or an
/// unreadable checkpoint stops the coordinator with a configuration error (exit 78).
package struct OpenedCoordinatorStore: Sendable {
    /// The store.
    package var store: any CoordinatorStore
    /// This process's fencing token: every commit carries it.
    package var token: FencingToken
    /// The latest committed checkpoint (`nil`: the store is new).
    package var checkpoint: CoordinatorCheckpoint?
    /// The checkpoint's tree, decoded.
    package var snapshot: TreeSnapshot?
    /// The sessions the store holds, which the coordinator resumes (passivated) when it hosts
    /// sessions.
    package var sessions: [StoredSession] = []

    /// Opens the store `settings` name as its writer `holder` (`nil` for `.none`), reading and
    /// writing `schema`'s layout.
    package static func open(
        _ settings: StoreSettings, holder: String, schema: StoreSchema = .thisRelease, logger: Logger
    ) async throws(CoordinatorStoreError) -> OpenedCoordinatorStore? {
        let store: any CoordinatorStore
        switch settings.kind {
        case .none: return nil
        case .sqlite:
            store = try await SQLiteCoordinatorStore.open(
                path: settings.path ?? "", sync: settings.sync, maxCommitBatch: settings.maxCommitBatch, schema: schema, logger: logger)
        case .postgres:
            store = try await PostgresCoordinatorStore.open(
                url: settings.url ?? "", maxCommitBatch: settings.maxCommitBatch, schema: schema, holder: holder, logger: logger)
        }
        do throws(CoordinatorStoreError) {
            let token = try await store.acquireWriter(holder: holder)
            return try await resume(store, token: token, name: settings.path ?? settings.url.map { PostgresCoordinatorStore.withoutPassword($0) } ?? "")
        } catch {
            await store.close()
            throw error
        }
    }

    /// `store`, whose writer this process has become with `token` (by `acquireWriter` or a
    /// lease), with the shared root's latest checkpoint read and decoded and its sessions listed;
    /// `name` names the store in errors.
    package static func resume(_ store: any CoordinatorStore, token: FencingToken, name: String) async throws(CoordinatorStoreError)
        -> OpenedCoordinatorStore
    {
        let checkpoint = try await store.latestCheckpoint()
        var snapshot: TreeSnapshot?
        if let checkpoint {
            do {
                snapshot = try TreeSnapshot.decode(from: checkpoint.snapshot)
            } catch {
                throw CoordinatorStoreError.corrupt(store: name, reason: "checkpoint \(checkpoint.number) is not a tree snapshot: \(error)")
            }
        }
        let sessions = try await store.storedSessions()
        return OpenedCoordinatorStore(store: store, token: token, checkpoint: checkpoint, snapshot: snapshot, sessions: sessions)
    }
}
