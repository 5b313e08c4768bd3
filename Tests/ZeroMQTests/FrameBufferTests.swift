import Foundation
import Testing
import ZeroMQ

/// A loop's receive and send path without per-message arrays: messages received into one
/// reused `ZMQFrameBuffer`, and messages sent frame by frame (`sendFrame`).
@Suite struct FrameBufferTests {
    @Test func receivingIntoABufferReplacesTheLastMessageFrameByFrame() throws {
        let context = try ZMQContext()
        let (receiver, sender) = try makeConnectedPair(context)
        let large = [UInt8](repeating: 7, count: 100_000)  // beyond libzmq's inline (VSM) size
        let messages: [[[UInt8]]] = [
            [.utf8("head"), [], large, .utf8("tail")],
            [.utf8("single")],
            [[]],
        ]
        for message in messages { try sender.send(message) }

        var buffer = ZMQFrameBuffer()
        for expected in messages {
            #expect(try receiver.receiveMultipart(into: &buffer, .timeout(.seconds(10))))
            #expect(buffer.count == expected.count)
            #expect((0..<buffer.count).map { buffer.frame($0) } == expected)
            #expect(buffer.byteCount() == expected.reduce(0) { $0 + $1.count })
            #expect(buffer.withFrames { $0.map { Array($0) } } == expected)
        }
        // From a given frame on (a ROUTER's routing id skipped), and nothing waiting.
        try sender.send(messages[0])
        #expect(try receiver.receiveMultipart(into: &buffer, .timeout(.seconds(10))))
        #expect(buffer.withFrames(from: 2) { $0.map { Array($0) } } == [large, .utf8("tail")])
        #expect(buffer.byteCount(from: 2) == large.count + 4)
        #expect(try receiver.receiveMultipart(into: &buffer, .dontWait) == false)
        #expect(buffer.isEmpty, "a receive that finds nothing leaves no stale message")
    }

    @Test func framesPastTheCopyLimitAreHeldEmpty() throws {
        let context = try ZMQContext()
        let (receiver, sender) = try makeConnectedPair(context)
        try sender.send([[UInt8].utf8("a"), .utf8("b"), .utf8("c")])
        var buffer = ZMQFrameBuffer()
        #expect(try receiver.receiveMultipart(into: &buffer, .timeout(.seconds(10)), copyingAtMost: 1))
        #expect((0..<buffer.count).map { buffer.frame($0) } == [.utf8("a"), [], []])
    }

    @Test func framesSentOneByOneArriveAsOneMessage() throws {
        let context = try ZMQContext()
        let (receiver, sender) = try makeConnectedPair(context)
        let frames: [[UInt8]] = [.utf8("one"), [], .utf8("three")]
        for (index, frame) in frames.enumerated() {
            let sent: Result<Void, ZMQError> = frame.withUnsafeBytes { bytes in
                Result { () throws(ZMQError) in try sender.sendFrame(bytes, more: index < frames.count - 1) }
            }
            try sent.get()
        }
        #expect(try receiver.receiveMultipart(.timeout(.seconds(10))) == frames)
    }

    @Test func errorTextIsLibzmqsForItsCode() {
        let error = ZMQError(code: EAGAIN)
        #expect(error.isAgain)
        #expect(!error.message.isEmpty)
        #expect(error == ZMQError(code: EAGAIN))
        #expect(error.description.contains(error.message))
    }
}
