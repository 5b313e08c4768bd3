import Testing
@testable import Workflow

// `WorkflowHost.outputs` runs over the host's own queue (`OutputQueue`): lossless and in order
// however far the reader falls behind, ended by the host's stop (after what is queued), by the
// reader's cancellation, or by dropping the stream, which also stops the queueing.
@Suite struct OutputStreamTests {
    @Test func aReaderFarBehindGetsEveryOutputInOrder() async throws {
        let publication = Publication<Int, Int>()
        let outputs = publication.subscribeOutputs()
        for value in 0..<5_000 { publication.publish(output: value) }
        #expect(try await next(5_000, from: outputs) == Array(0..<5_000))
        // Interleaved with reading, and a second subscriber sees the same.
        let second = publication.subscribeOutputs()
        for value in 0..<3 { publication.publish(output: value) }
        #expect(try await next(3, from: outputs) == [0, 1, 2])
        #expect(try await next(3, from: second) == [0, 1, 2])
    }

    @Test func aWaitingReaderIsHandedTheNextOutput() async throws {
        let publication = Publication<Int, Int>()
        let outputs = publication.subscribeOutputs()
        let reader = Task { try await next(2, from: outputs) }
        // Whether the reader is already waiting or not, both arrive, in order.
        publication.publish(output: 7)
        publication.publish(output: 8)
        #expect(try await reader.value == [7, 8])
    }

    @Test func outputsPublishedWhileWakesAreHeldReachAWaitingReader() async throws {
        let publication = Publication<Int, Int>()
        let outputs = publication.subscribeOutputs()
        let reader = Task { try await next(3, from: outputs) }
        // The host applies a flush with wakes held: the reader may be waiting throughout and is
        // resumed once the call returns, with all three.
        publication.holdingOutputWakes {
            for value in 1...3 { publication.publish(output: value) }
        }
        #expect(try await reader.value == [1, 2, 3])
        // Finished while held: the queued output comes first, then the end.
        var iterator = outputs.makeAsyncIterator()
        publication.holdingOutputWakes {
            publication.publish(output: 4)
            publication.finish()
        }
        #expect(await iterator.next() == 4)
        #expect(await iterator.next() == nil)
    }

    @Test func aReaderGetsTheOldestOutputWhateverWokeIt() async {
        let queue = OutputQueue<Int>()
        let reader = Task { [await queue.next(), await queue.next(), await queue.next()] }
        // Whether the reader waits before, between or after these: one output queued without
        // a wake, then one with, then an explicit wake; the reader sees them in order.
        queue.push(1, wake: false)
        queue.push(2)
        queue.push(3, wake: false)
        queue.wake()
        #expect(await reader.value == [1, 2, 3])
    }

    @Test func finishEndsTheStreamAfterWhatIsQueued() async {
        let publication = Publication<Int, Int>()
        let outputs = publication.subscribeOutputs()
        publication.publish(output: 1)
        publication.finish()
        var iterator = outputs.makeAsyncIterator()
        #expect(await iterator.next() == 1)
        #expect(await iterator.next() == nil)
        var late = publication.subscribeOutputs().makeAsyncIterator()
        #expect(await late.next() == nil, "a subscription after finish ends at once")
    }

    @Test func cancellingTheReaderEndsItsStreamAndUnsubscribes() async throws {
        let publication = Publication<Int, Int>()
        let outputs = publication.subscribeOutputs()
        let reader = Task {
            var seen = 0
            for await _ in outputs { seen += 1 }
            return seen
        }
        publication.publish(output: 1)
        reader.cancel()
        // The reader returns (it would hang if its waiting `next()` were not resumed).
        _ = await reader.value
        #expect(publication.outputSubscriberTotal == 0)
    }

    @Test func droppingTheStreamUnsubscribes() async {
        let publication = Publication<Int, Int>()
        do {
            let outputs = publication.subscribeOutputs()
            #expect(publication.outputSubscriberTotal == 1)
            publication.publish(output: 1)
            _ = outputs
        }
        #expect(publication.outputSubscriberTotal == 0, "nothing queues outputs for a stream nobody holds")
        publication.publish(output: 2)
    }
}
