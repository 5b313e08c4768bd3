import CZeroMQ

/// The messaging pattern of a socket, fixed at creation.
///
/// Only the patterns the workflow runtime and its tests need are offered, to keep the
/// surface small: DEALER/ROUTER carry the tree's request/stream traffic, PAIR backs
/// monitors and in-process plumbing, PUB/SUB broadcasts, REQ/REP and PUSH/PULL are there
/// for simple tools and tests.
public enum ZMQSocketType: Sendable, Hashable, CaseIterable {
    /// Exclusive 1:1 connection; used for socket monitors and inproc hand-offs.
    case pair
    /// Publisher: fans messages out to all matching subscribers, dropping on slow peers.
    case pub
    /// Subscriber: receives messages whose first frame matches a subscribed prefix.
    case sub
    /// Strict request side of request/reply (send, then receive, in lock-step).
    case req
    /// Strict reply side of request/reply.
    case rep
    /// Asynchronous client: round-robins outgoing messages, fair-queues incoming ones.
    case dealer
    /// Asynchronous server: prefixes each incoming message with the sender's routing id and
    /// routes outgoing messages by their first frame.
    case router
    /// Pipeline consumer.
    case pull
    /// Pipeline producer.
    case push

    /// The `ZMQ_*` constant passed to `zmq_socket`.
    var rawValue: Int32 {
        switch self {
        case .pair: ZMQ_PAIR
        case .pub: ZMQ_PUB
        case .sub: ZMQ_SUB
        case .req: ZMQ_REQ
        case .rep: ZMQ_REP
        case .dealer: ZMQ_DEALER
        case .router: ZMQ_ROUTER
        case .pull: ZMQ_PULL
        case .push: ZMQ_PUSH
        }
    }
}
