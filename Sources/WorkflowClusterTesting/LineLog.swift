import Foundation
import Synchronization

/// The lines a daemon wrote to one of its output streams, growing as it writes, with waiting.
///
/// Tests synchronise on what daemons print (a rendering, a status, a log line) instead of
/// sleeping: `first(where:)` returns as soon as a matching line exists, or fails after the
/// safety timeout.
public final class LineLog: Sendable {
    private struct State {
        var lines: [String] = []
        var partial = Data()
        var finished = false
        var subscribers: [UUID: AsyncStream<String>.Continuation] = [:]
    }

    private let state = Mutex(State())

    /// Every complete line so far.
    public var lines: [String] { state.withLock { $0.lines } }

    /// The number of complete lines so far (a cursor for "after this point" waits).
    public var count: Int { state.withLock { $0.lines.count } }

    /// Creates an empty log.
    public init() {}

    /// Appends bytes read from the pipe; empty data means end of file.
    public func append(_ data: Data) {
        // Finishing a stream runs its termination handler, which takes the lock: finish outside.
        let finished = state.withLock { state -> [AsyncStream<String>.Continuation] in
            guard !state.finished else { return [] }
            if data.isEmpty {
                if !state.partial.isEmpty { deliver(String(decoding: state.partial, as: UTF8.self), &state) }
                state.partial = Data()
                state.finished = true
                defer { state.subscribers = [:] }
                return Array(state.subscribers.values)
            }
            state.partial.append(data)
            while let newline = state.partial.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: state.partial[state.partial.startIndex..<newline], as: UTF8.self)
                state.partial = Data(state.partial[state.partial.index(after: newline)...])
                deliver(line, &state)
            }
            return []
        }
        for continuation in finished { continuation.finish() }
    }

    private func deliver(_ line: String, _ state: inout State) {
        state.lines.append(line)
        for continuation in state.subscribers.values { continuation.yield(line) }
    }

    /// The lines from index `start` on: those already written, then each new one.
    public func lines(from start: Int) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        let id = UUID()
        state.withLock { state in
            for line in state.lines.dropFirst(start) { continuation.yield(line) }
            if state.finished {
                continuation.finish()
            } else {
                state.subscribers[id] = continuation
            }
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Waits until the stream has ended (the writer closed it), so `lines` is complete.
    public func waitForEnd() async {
        for await _ in lines(from: count) {}
    }

    /// The first line at or after `start` that satisfies `predicate`.
    @discardableResult
    public func first(_ what: String, from start: Int = 0, where predicate: @escaping @Sendable (String) -> Bool) async throws -> String {
        try await withSafetyTimeout("waiting for \(what)") {
            for await line in self.lines(from: start) where predicate(line) { return line }
            throw WaitFailure(description: "the stream ended before \(what)")
        }
    }
}
