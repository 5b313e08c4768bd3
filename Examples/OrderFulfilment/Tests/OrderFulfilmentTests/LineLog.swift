import Foundation
import Synchronization

/// The lines a daemon wrote to one of its pipes, and a way to wait for one.
///
/// Each append wakes every waiter, which checks the new lines; waiting never polls.
final class LineLog: Sendable {
    private struct State {
        var lines: [String] = []
        var partial = Data()
        var ended = false
        var watchers: [UInt64: AsyncStream<Void>.Continuation] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Every complete line so far.
    var lines: [String] { state.withLock { $0.lines } }

    /// Appends bytes read from the pipe; empty data is the pipe's end.
    func append(_ data: Data) {
        let watchers = state.withLock { state in
            if data.isEmpty {
                state.ended = true
                if !state.partial.isEmpty { state.lines.append(String(decoding: state.partial, as: UTF8.self)) }
                state.partial = Data()
            } else {
                state.partial.append(data)
                while let newline = state.partial.firstIndex(of: UInt8(ascii: "\n")) {
                    state.lines.append(String(decoding: state.partial[state.partial.startIndex..<newline], as: UTF8.self))
                    state.partial = Data(state.partial[(newline + 1)...])
                }
            }
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher.yield() }
    }

    /// The first line at or after index `from` satisfying `predicate`; waits for it (bounded by
    /// `Timeouts.safety`); fails if the pipe ends first.
    @discardableResult
    func first(_ what: String, from: Int = 0, where predicate: @escaping @Sendable (String) -> Bool) async throws -> String {
        let (id, changes) = watch()
        defer { unwatch(id) }
        return try await withTimeout(what) { [self] in
            var index = from
            var iterator = changes.makeAsyncIterator()
            while true {
                let (lines, ended) = state.withLock { ($0.lines, $0.ended) }
                while index < lines.count {
                    if predicate(lines[index]) { return lines[index] }
                    index += 1
                }
                if ended { throw TestFailure("the output ended before \(what)") }
                guard await iterator.next() != nil else { throw TestFailure("cancelled while waiting for \(what)") }
            }
        }
    }
}

extension LineLog {
    /// Waits for the pipe's end (bounded by `Timeouts.safety`): a process's exit can be seen
    /// before the thread reading its pipe has read the last bytes.
    func waitForEnd(_ what: String) async throws {
        let (id, changes) = watch()
        defer { unwatch(id) }
        try await withTimeout(what) { [self] in
            var iterator = changes.makeAsyncIterator()
            while !state.withLock({ $0.ended }) {
                guard await iterator.next() != nil else { throw TestFailure("cancelled while waiting for \(what)") }
            }
        }
    }

    /// A stream that yields after each append, until `unwatch`.
    private func watch() -> (UInt64, AsyncStream<Void>) {
        let (changes, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            state.nextID += 1
            state.watchers[state.nextID] = continuation
            return state.nextID
        }
        return (id, changes)
    }

    private func unwatch(_ id: UInt64) {
        _ = state.withLock { $0.watchers.removeValue(forKey: id) }
    }
}

/// A failure with words.
struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs `operation`, failing after a generous bound (a safety net for a broken build on a
/// loaded machine, never a synchronisation).
func withTimeout<T: Sendable>(_ what: String, seconds: Int = 120, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TestFailure("timed out after \(seconds) s waiting for \(what)")
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
