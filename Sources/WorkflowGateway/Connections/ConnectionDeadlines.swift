import NIOCore
import WorkflowCluster

/// What one HTTP/1 connection is waiting for, and until when: the header, body and idle
/// timeouts of `GatewayLimits` as a value driven by the connection's events (no I/O, no clock:
/// each event carries `now`).
///
/// A connection opens waiting for a head (header timeout). A head starts its body (body
/// timeout, a deadline for the whole body). Once the request is read the application answers,
/// with no deadline; once every request read is answered the connection is idle (idle timeout)
/// until a byte of the next request arrives, which starts the next head's deadline.
struct ConnectionDeadlines {
    /// What the connection waits for.
    enum Waiting: Equatable {
        /// The first byte of a next request (idle timeout).
        case nextRequest
        /// The rest of a request head (header timeout).
        case head
        /// The rest of a request body (body timeout).
        case body
        /// The application's answer, or a WebSocket's traffic: no deadline.
        case nothing
    }

    /// Why a deadline closed the connection.
    enum Expiry: Equatable {
        case headerTimeout, bodyTimeout, idleTimeout
    }

    let limits: GatewayLimits
    private(set) var waiting: Waiting = .head
    private(set) var deadline: NIODeadline?
    /// Requests whose head was read and whose answer has not ended.
    private(set) var unanswered = 0
    /// An answer has started (its head was written) and not ended.
    private(set) var answering = false
    /// The last request's body is still arriving.
    private(set) var readingBody = false
    private var upgraded = false

    init(limits: GatewayLimits, now: NIODeadline) {
        self.limits = limits
        self.deadline = now + TimeAmount(limits.headerTimeout)
    }

    /// Bytes arrived: if the connection was idle, a request head has begun.
    mutating func receivedBytes(now: NIODeadline) {
        guard waiting == .nextRequest else { return }
        wait(for: .head, now: now)
    }

    /// A request head was read.
    mutating func receivedHead(now: NIODeadline) {
        unanswered += 1
        readingBody = true
        wait(for: .body, now: now)
    }

    /// A request's end was read.
    mutating func receivedEnd(now: NIODeadline) {
        readingBody = false
        wait(for: unanswered == 0 ? .nextRequest : .nothing, now: now)
    }

    /// An answer's head was written.
    mutating func sentHead() {
        answering = true
    }

    /// An answer's end was written.
    mutating func sentEnd(now: NIODeadline) {
        answering = false
        unanswered = max(0, unanswered - 1)
        if unanswered == 0, !readingBody { wait(for: .nextRequest, now: now) }
    }

    /// The connection became a WebSocket: no HTTP deadline applies any more.
    mutating func upgrade() {
        upgraded = true
        waiting = .nothing
        deadline = nil
    }

    /// The deadline passed (`now` at or after it): why, or `nil` when it moved meanwhile.
    func expiry(now: NIODeadline) -> Expiry? {
        guard let deadline, now >= deadline else { return nil }
        switch waiting {
        case .head: return .headerTimeout
        case .body: return .bodyTimeout
        case .nextRequest: return .idleTimeout
        case .nothing: return nil
        }
    }

    /// Whether the guard may still write an answer of its own: no answer is started and none is
    /// owed for a request read before.
    var mayAnswer: Bool {
        !answering && unanswered == (readingBody ? 1 : 0)
    }

    private mutating func wait(for what: Waiting, now: NIODeadline) {
        guard !upgraded else { return }
        waiting = what
        switch what {
        case .head: deadline = now + TimeAmount(limits.headerTimeout)
        case .body: deadline = now + TimeAmount(limits.bodyTimeout)
        case .nextRequest: deadline = now + TimeAmount(limits.idleTimeout)
        case .nothing: deadline = nil
        }
    }
}
