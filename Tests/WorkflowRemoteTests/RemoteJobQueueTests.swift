import Foundation
import Synchronization
import Testing
import ZeroMQ
@testable import WorkflowRemote

/// A value several threads record into.
final class Recorded<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ initial: Value) { value = Mutex(initial) }
    func update(_ change: (inout Value) -> Void) { value.withLock { change(&$0) } }
    var current: Value { value.withLock { $0 } }
}

/// The loop's job queue with a real wakeup pipe and real threads, no loop.
@Suite struct RemoteJobQueueTests {
    /// Runs every `.run` job of `jobs`.
    func perform(_ jobs: [RemoteJob]) {
        for case .run(let job) in jobs { job() }
    }

    @Test("jobs from four threads come out in each thread's order, each once")
    func orderPerThread() async throws {
        let queue = RemoteJobQueue(wakeup: try ZMQWakeup())
        let seen = Recorded<[Int: [Int]]>([:])
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    for number in 0..<250 { queue.append { seen.update { $0[thread, default: []].append(number) } } }
                }
            }
        }
        var taken: [RemoteJob] = []
        #expect(queue.takeAll(into: &taken) == false)
        #expect(taken.count == 1_000)
        perform(taken)
        #expect(seen.current == Dictionary(uniqueKeysWithValues: (0..<4).map { ($0, Array(0..<250)) }))
        #expect(!queue.hasJobs)
    }

    @Test("after a stop is requested, appendUnlessStopping refuses and takeAll reports the stop")
    func stopRefusesNewJobs() throws {
        let queue = RemoteJobQueue(wakeup: try ZMQWakeup())
        #expect(queue.appendUnlessStopping {})
        queue.requestStop()
        #expect(!queue.appendUnlessStopping {})
        var taken: [RemoteJob] = []
        #expect(queue.takeAll(into: &taken) == true)
        #expect(taken.count == 1, "the job appended before the stop still runs")
    }

    @Test("once the loop has ended, what was queued runs first, and a job appended later runs on the appending thread, in order")
    func afterTheEndJobsRunOnTheAppender() throws {
        let queue = RemoteJobQueue(wakeup: try ZMQWakeup())
        let order = Recorded<[String]>([])
        queue.append { order.update { $0.append("queued before the end") } }
        queue.end { job in
            if case .run(let run) = job { run() }
        }
        #expect(order.current == ["queued before the end"])
        let appender = pthread_self()
        let ranHere = Recorded(false)
        queue.append {
            ranHere.update { $0 = pthread_equal(pthread_self(), appender) != 0 }
            order.update { $0.append("appended after") }
        }
        #expect(ranHere.current, "a job appended after the end runs on the appending thread, before append returns")
        #expect(order.current == ["queued before the end", "appended after"])
        var unused: [RemoteJob] = []
        #expect(queue.takeAll(into: &unused) == false && unused.isEmpty)
    }
}
