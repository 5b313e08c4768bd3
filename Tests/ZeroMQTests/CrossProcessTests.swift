import Foundation
import Testing
import ZeroMQ

/// Traffic between this test process and a separate `zmq-test-peer` process.
@Suite struct CrossProcessTests {
    @Test("DEALER/ROUTER round trip with another process", arguments: Transport.allCases)
    func dealerRouterRoundTrip(transport: Transport) throws {
        let context = try ZMQContext()
        let router = try makeSocket(.router, context)
        try router.set(.routerMandatory, true)
        try router.bind(transport.bindEndpoint)
        let endpoint = try router.lastEndpoint
        #expect(endpoint.hasPrefix("\(transport.rawValue)://"))
        #expect(!endpoint.hasSuffix("*"))

        let messageCount = 20
        let peer = try PeerProcess.launch(["echo", endpoint, String(messageCount)])
        defer { peer.terminateAndReap() }

        // The peer announces itself, which tells the ROUTER its routing id.
        let hello = try #require(try router.receiveMultipart(.timeout(.seconds(30))))
        try #require(hello.count == 2)
        #expect(hello[1] == .utf8("hello"))
        let peerID = hello[0]

        for index in 0..<messageCount {
            let payload: [[UInt8]] = [.utf8("message-\(index)"), [], [UInt8](repeating: UInt8(index), count: index * 100)]
            try router.send([peerID] + payload)
            let echoed = try #require(try router.receiveMultipart(.timeout(.seconds(30))))
            #expect(echoed == [peerID] + payload)
        }
        #expect(peer.waitForExit() == 0)
    }
}
