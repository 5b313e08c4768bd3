import Foundation
import Workflow

/// The coordinator's snapshot file: the root host's `TreeSnapshot` (the root's state and each
/// remote child's last acknowledged state), written atomically and read back at `--restore`.
///
/// Written to a temporary file in the same directory, flushed, then renamed over the target, so
/// a crash mid-write leaves the previous snapshot intact: a reader sees the old file or the new
/// one, never a torn one.
package enum SnapshotFile {
    /// Why a snapshot could not be written or restored.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// The snapshot file.
        package var file: String
        /// What went wrong.
        package var reason: String

        /// A one-line message naming the file.
        package var description: String { "snapshot file \(file): \(reason)" }
    }

    /// Writes `snapshot` to `path` atomically (temporary file + fsync + rename).
    package static func write(_ snapshot: TreeSnapshot, to path: String) throws {
        let data: Data
        do {
            data = try snapshot.encoded()
        } catch {
            throw Failure(file: path, reason: "could not encode the snapshot: \(error)")
        }
        let temporary = path + ".tmp-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Failure(file: path, reason: "cannot create \(temporary): \(String(cString: strerror(errno)))") }
        let written = data.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == data.count, synced else {
            unlink(temporary)
            throw Failure(file: path, reason: "cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(file: path, reason: "cannot rename \(temporary) over it: \(reason)")
        }
    }

    /// Reads and decodes the snapshot at `path`. A missing, unreadable or corrupt file is a
    /// `Failure`: the coordinator refuses to start rather than silently start fresh, because
    /// an operator who asked for a restore expects the state back (start without `--restore`
    /// to start fresh deliberately).
    package static func load(_ path: String) throws -> TreeSnapshot {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "unreadable" : "no such file"
            throw Failure(file: path, reason: "\(reason) (expected a snapshot written by --snapshot-file)")
        }
        do {
            return try TreeSnapshot.decode(from: data)
        } catch {
            throw Failure(file: path, reason: "not a valid tree snapshot (corrupt or not written by --snapshot-file): \(error)")
        }
    }
}
