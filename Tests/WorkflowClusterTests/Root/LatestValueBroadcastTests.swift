import Testing
import WorkflowCluster

/// The broadcast of a tree's latest rendering to its readers: each starts with the latest value,
/// sees every later one while it keeps up, leaves the list when its stream ends, and all end on
/// `finish()`.
@Suite struct LatestValueBroadcastTests {
    @Test func readersStartWithTheLatestAndEndedOnesAreForgotten() async {
        let broadcast = LatestValueBroadcast<Int>()
        #expect(broadcast.latest == nil)
        broadcast.publish(1)
        var first = broadcast.subscribe().makeAsyncIterator()
        #expect(await first.next() == 1)
        do {
            var second = broadcast.subscribe().makeAsyncIterator()
            #expect(broadcast.readerCount == 2)
            #expect(await second.next() == 1)
            broadcast.publish(2)
            #expect(await first.next() == 2)
            #expect(await second.next() == 2)
        }
        // The second stream is gone with its iterator: forgotten, while the first still reads.
        #expect(broadcast.readerCount == 1)
        broadcast.publish(3)
        #expect(await first.next() == 3)
        #expect(broadcast.latest == 3)
        broadcast.finish()
        #expect(await first.next() == nil)
        #expect(broadcast.readerCount == 0)
        // After `finish()`, a new reader gets the latest value and its stream ends.
        var late = broadcast.subscribe().makeAsyncIterator()
        #expect(await late.next() == 3)
        #expect(await late.next() == nil)
        #expect(broadcast.readerCount == 0)
    }

    @Test func aSlowReaderSkipsToTheNewest() async {
        let broadcast = LatestValueBroadcast<Int>()
        var reader = broadcast.subscribe().makeAsyncIterator()
        for value in 1...5 { broadcast.publish(value) }
        #expect(await reader.next() == 5)
        let (values, again) = broadcast.subscription()
        var second = values.makeAsyncIterator()
        #expect(await second.next() == 5)
        again()
        #expect(await second.next() == 5)
        broadcast.finish()
    }
}
