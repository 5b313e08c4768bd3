// A peer process for the ZeroMQ tests: proves that traffic really crosses a process
// boundary. Usage:
//
//   zmq-test-peer echo <endpoint> <count>
//
// Connects a DEALER to <endpoint>, sends ["hello"] so the ROUTER learns its routing id,
// then echoes <count> multipart messages back unchanged and exits 0. Exits 2 if nothing
// arrives for 10 s (so an abandoned peer never lingers) and 1 on any libzmq error.
import Foundation
import ZeroMQ

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("zmq-test-peer: \(message)\n".utf8))
    exit(code)
}

let arguments = CommandLine.arguments
guard arguments.count == 4, arguments[1] == "echo", let count = Int(arguments[3]), count >= 0 else {
    fail("usage: zmq-test-peer echo <endpoint> <count>", code: 64)
}

do {
    let context = try ZMQContext()
    let dealer = try ZMQSocket(.dealer, context: context)
    // Let the final echo flush before exit, but never hang forever on a dead test.
    try dealer.set(.linger, 5_000)
    try dealer.connect(arguments[2])
    try dealer.send([Array("hello".utf8)])
    for _ in 0..<count {
        guard let frames = try dealer.receiveMessages(.timeout(.seconds(10))) else {
            fail("timed out waiting for a message", code: 2)
        }
        try dealer.send(frames)
    }
    dealer.close()
} catch {
    fail("\(error)", code: 1)
}
exit(0)
