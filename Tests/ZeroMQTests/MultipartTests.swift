import Foundation
import Testing
import ZeroMQ

/// Multipart messages travel as atomic units with frame order and `more` flags intact.
@Suite struct MultipartTests {
    @Test func framesArriveTogetherInOrderWithMoreFlags() throws {
        let context = try ZMQContext()
        let (receiver, sender) = try makeConnectedPair(context)

        let messages: [[[UInt8]]] = [
            [.utf8("a"), .utf8("b"), .utf8("c")],
            [.utf8("single")],
            [.utf8("head"), [], .utf8("tail")],
        ]
        for message in messages { try sender.send(message) }

        for expected in messages {
            let frames = try #require(try receiver.receiveMessages(.timeout(.seconds(10))))
            #expect(frames.map(\.bytes) == expected)
            #expect(frames.map(\.hasMore) == Array(repeating: true, count: expected.count - 1) + [false])
        }
        #expect(try receiver.receiveMessages(.dontWait) == nil)
    }

    @Test func receivingCopiesOnlyTheFirstFramesAskedForAndCountsTheRest() throws {
        let context = try ZMQContext()
        let (receiver, sender) = try makeConnectedPair(context)

        let large = [UInt8](repeating: 7, count: 100_000)  // beyond libzmq's inline (VSM) size
        let messages: [[[UInt8]]] = [
            [.utf8("a"), [], large, .utf8("d"), .utf8("e")],
            [.utf8("only")],
            [[]],
        ]
        for message in messages { try sender.send(message) }
        // Every frame copied: the message as sent, frame by frame, whatever the frame's size.
        #expect(try receiver.receiveMultipart(.timeout(.seconds(10)), copyingAtMost: .max) == messages[0])
        #expect(try receiver.receiveMultipart(.timeout(.seconds(10)), copyingAtMost: 0) == [[]])
        #expect(try receiver.receiveMultipart(.timeout(.seconds(10)), copyingAtMost: 1) == [[]])

        for message in messages { try sender.send(message) }
        // Frames past the limit are received (the message is consumed whole) but come back empty.
        #expect(try receiver.receiveMultipart(.timeout(.seconds(10)), copyingAtMost: 3) == [.utf8("a"), [], large, [], []])
        #expect(try receiver.receiveMultipart(.timeout(.seconds(10)), copyingAtMost: 1) == [.utf8("only")])
        #expect(try receiver.receiveMultipart(.timeout(.seconds(10))) == [[]])
        #expect(try receiver.receiveMultipart(.dontWait, copyingAtMost: 1) == nil, "nothing waits")
    }

    @Test func manyInterleavedMessagesNeverSplitOverIPC() throws {
        let context = try ZMQContext()
        let router = try makeSocket(.router, context)
        let dealer = try makeSocket(.dealer, context)
        try router.bind(TestEndpoint.ipc())
        try dealer.connect(try router.lastEndpoint)

        let count = 200
        for index in 0..<count {
            try dealer.send([Data("first-\(index)".utf8), Data(count: index * 7), Data("last-\(index)".utf8)])
        }
        for index in 0..<count {
            let frames = try #require(try router.receiveMultipartData(.timeout(.seconds(10))))
            // ROUTER prepends the sender's routing id.
            try #require(frames.count == 4)
            #expect(frames[1] == Data("first-\(index)".utf8))
            #expect(frames[2].count == index * 7)
            #expect(frames[3] == Data("last-\(index)".utf8))
        }
    }

    @Test func zeroCopySendHandsBuffersToLibzmq() throws {
        let context = try ZMQContext()
        let (receiver, sender) = try makeConnectedPair(context)

        let frames = [try ZMQMessage(bytes: [UInt8].utf8("zero")), try ZMQMessage(bytes: [UInt8].utf8("copy"))]
        try sender.send(frames)
        #expect(frames.allSatisfy { $0.count == 0 }, "libzmq took ownership of the frame buffers")

        let received = try #require(try receiver.receiveMessages(.timeout(.seconds(10))))
        let decoded = received.map { message in
            message.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        }
        #expect(decoded == ["zero", "copy"])
    }

    @Test func emptyFrameListIsRejected() throws {
        let context = try ZMQContext()
        let socket = try makeSocket(.pair, context)
        let error = #expect(throws: ZMQError.self) { try socket.send([[UInt8]]()) }
        #expect(error?.code == EINVAL)
    }
}
