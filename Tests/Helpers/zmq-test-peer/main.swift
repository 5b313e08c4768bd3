// A peer process for the ZeroMQ and cluster tests: proves that traffic really crosses a process
// boundary, and plays a hostile peer. Usage:
//
//   zmq-test-peer echo <endpoint> <count>
//
// Connects a DEALER to <endpoint>, sends ["hello"] so the ROUTER learns its routing id,
// then echoes <count> multipart messages back unchanged and exits 0. Exits 2 if nothing
// arrives for 10 s (so an abandoned peer never lingers) and 1 on any libzmq error.
//
//   zmq-test-peer flood <endpoint> <count> <size> <kind> [<peers>]
//
// Connects <peers> DEALERs (default 1, each with its own routing id) to <endpoint> and sends
// <count> messages of about <size> bytes in turn over them, as fast as the sockets take them,
// never reading a reply. <kind> is what the messages hold:
//
//   garbage    one frame of <size> bytes that is not an envelope (the "malformed message" path)
//   hello      the same valid HELLO each time, from a worker named "intruder" that hosts one
//              type with a <size>-byte name (a parent answers each with WELCOME)
//   slow-hello as hello, but <size> bytes of 16-byte type names: slow for the receiver to decode
//   oversize   garbage meant to exceed the receiver's ZMQ_MAXMSGSIZE: after each message
//              the peer waits until the receiver has disconnected it (it reconnects by
//              itself), and fails with 2 if that does not happen within 10 s
//
// Prints "flood sent <count> messages, <bytes> bytes[, disconnected <n> times]" on standard
// output and exits 0 once every message has left its socket; 1 on any libzmq error.
//
//   zmq-test-peer lifecycles <count>
//
// Runs <count> full socket lifecycles in this process (a context, a bound ROUTER and a connected
// DEALER on a fresh ipc endpoint, one message, teardown) after one to warm up, and prints
// "descriptors <before> <after>": the process's open file descriptors before and after. A
// process of its own, so nothing else moves the count (the descriptor-leak test reads it).
//
// In every mode the process ends within 60 s whatever happens (SIGALRM), so a test that dies
// never leaves a peer running.
import Foundation
import WireProtocol
import ZeroMQ

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("zmq-test-peer: \(message)\n".utf8))
    exit(code)
}

func echo(endpoint: String, count: Int) throws {
    let context = try ZMQContext()
    let dealer = try ZMQSocket(.dealer, context: context)
    // Let the final echo flush before exit, but never hang forever on a dead test.
    try dealer.set(.linger, 5_000)
    try dealer.connect(endpoint)
    try dealer.send([Array("hello".utf8)])
    for _ in 0..<count {
        guard let frames = try dealer.receiveMessages(.timeout(.seconds(10))) else {
            fail("timed out waiting for a message", code: 2)
        }
        try dealer.send(frames)
    }
    dealer.close()
}

enum FloodKind: String {
    case garbage, hello, slowHello = "slow-hello", oversize
}

/// HELLO's payload as a peer that only knows docs/WIRE-PROTOCOL.md §10 writes it.
struct Hello: Codable {
    var name: String
    var pool: String
    var hostedTypes: [String]
    var capacity: Int
    var protocolVersion: Int
    var instance: String
}

/// Sends the flood; returns the bytes sent and how often a peer was disconnected. Returns only
/// after the context is gone, i.e. after every queued message left its socket.
func flood(endpoint: String, count: Int, size: Int, kind: FloodKind, peers: Int) throws -> (bytes: Int, disconnects: Int) {
    let message: [[UInt8]]
    switch kind {
    case .garbage, .oversize:
        // Starts with bytes no envelope header starts with (the magic is "WF").
        message = [[0xde, 0xad, 0xbe, 0xef] + [UInt8](repeating: 0x5a, count: max(0, size - 4))]
    case .hello, .slowHello:
        let types =
            kind == .hello
            ? ["Flood.Type".padding(toLength: size, withPad: "_", startingAt: 0)]
            : (0..<max(1, size / 16)).map { "Flood.Type\($0)".padding(toLength: 16, withPad: "_", startingAt: 0) }
        let hello = Hello(name: "intruder", pool: "flood", hostedTypes: types, capacity: 0, protocolVersion: 4, instance: "flood")
        message = try Envelope(kind: .hello, payloads: [try BinaryWireCodec().encode(hello)]).encodeFrames()
    }
    let context = try ZMQContext()
    var sockets: [ZMQSocket] = []
    var monitors: [ZMQSocketMonitor] = []
    for _ in 0..<peers {
        let dealer = try ZMQSocket(.dealer, context: context)
        // The context's end waits until every queued message has left (bounded by the alarm).
        try dealer.set(.linger, -1)
        if kind == .oversize {
            monitors.append(try ZMQSocketMonitor(monitoring: dealer, events: [.disconnected]))
        }
        try dealer.connect(endpoint)
        sockets.append(dealer)
    }
    var disconnects = 0
    for index in 0..<count {
        let peer = index % peers
        try sockets[peer].send(message)
        if kind == .oversize {
            guard try monitors[peer].waitFor(.disconnected, timeout: .seconds(10)) != nil else {
                fail("message \(index + 1) of \(size) bytes did not get this peer disconnected", code: 2)
            }
            disconnects += 1
        }
    }
    for monitor in monitors { monitor.stop() }
    for socket in sockets { socket.close() }
    return (count * message.reduce(0) { $0 + $1.count }, disconnects)
}

/// One lifecycle of the descriptor-leak check: a context, two sockets, a message, teardown.
func exerciseOneLifecycle(iteration: Int) throws {
    let context = try ZMQContext()
    let server = try ZMQSocket(.router, context: context)
    let client = try ZMQSocket(.dealer, context: context)
    try server.set(.linger, 0)
    try client.set(.linger, 0)
    let path = "/tmp/zmq-peer-\(getpid())-\(iteration)"
    try server.bind("ipc://" + path)
    try client.connect(try server.lastEndpoint)
    try client.send([Array("ping-\(iteration)".utf8)])
    guard let received = try server.receiveMultipart(.timeout(.seconds(10))), received.last == Array("ping-\(iteration)".utf8) else {
        fail("lifecycle \(iteration): the message did not arrive", code: 2)
    }
    client.close()
    client.close()  // idempotent
    server.close()
    unlink(path)
}

/// The process's open file descriptors.
func openDescriptors() throws -> Int {
    try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
}

// The process's lifetime bound: SIGALRM's default action ends it.
alarm(60)
let arguments = CommandLine.arguments
let usage = "usage: zmq-test-peer echo <endpoint> <count> | flood <endpoint> <count> <size> <garbage|hello|slow-hello|oversize> [<peers>] | lifecycles <count>"
do {
    switch arguments.dropFirst().first {
    case "echo":
        guard arguments.count == 4, let count = Int(arguments[3]), count >= 0 else { fail(usage, code: 64) }
        try echo(endpoint: arguments[2], count: count)
    case "flood":
        guard (6...7).contains(arguments.count), let count = Int(arguments[3]), count >= 0, let size = Int(arguments[4]), size >= 0,
            let kind = FloodKind(rawValue: arguments[5]), let peers = arguments.count == 7 ? Int(arguments[6]) : 1, peers >= 1
        else { fail(usage, code: 64) }
        let (bytes, disconnects) = try flood(endpoint: arguments[2], count: count, size: size, kind: kind, peers: peers)
        let disconnected = kind == .oversize ? ", disconnected \(disconnects) times" : ""
        print("flood sent \(count) messages, \(bytes) bytes\(disconnected)")
    case "lifecycles":
        guard arguments.count == 3, let count = Int(arguments[2]), count >= 0 else { fail(usage, code: 64) }
        try exerciseOneLifecycle(iteration: -1)  // warm up lazily created process-wide state
        let before = try openDescriptors()
        for iteration in 0..<count { try exerciseOneLifecycle(iteration: iteration) }
        print("descriptors \(before) \(try openDescriptors())")
    default:
        fail(usage, code: 64)
    }
} catch {
    fail("\(error)", code: 1)
}
exit(0)
