import ClusterTestSupport
import RemoteTestSupport
import Foundation
import Testing
import WireProtocol
import WorkflowClusterTesting

/// A hostile peer flooding the coordinator from a separate process (`zmq-test-peer flood`): the
/// coordinator's memory and log stay bounded however much is sent, it keeps its workers, and it
/// keeps serving them.
///
/// Serialized: each flood keeps both cores busy, and the tests measure the coordinator, not how
/// several floods share a machine. (They still run alongside the other suites.)
@Suite("Cluster floods", .serialized)
struct ClusterFloodTests {
    /// Messages the coordinator's listener holds per connection before libzmq stops reading it
    /// (`LoopSockets.listenerReceiveHighWaterMark`).
    static let receiveHighWaterMark = 1_000
    /// Messages the coordinator queues for one peer before a send to it fails and is dropped
    /// (`LoopSockets.sendHighWaterMark`).
    static let sendHighWaterMark = 100_000
    /// What libzmq holds per queued frame besides its bytes, rounded up: a 64-byte `zmq_msg_t`
    /// and, for a frame over 33 bytes, a heap block with its reference-count header.
    static let frameOverhead = 128
    /// libzmq reads a connection 8 KiB at a time into a buffer that the messages read from it
    /// share (zero-copy), allocated with room for their reference counts: about 20 KiB, freed
    /// when the last message in it is. A queued message smaller than that may keep one alive.
    static let readBufferBytes = 20 << 10
    /// Peak growth that does not scale with a flood: the heap arenas glibc gives libzmq's I/O
    /// thread and the loop thread, connection buffers, the loop's copy of the message in hand.
    static let fixedAllowance = 16 << 20
    /// The coordinator logs at most this many warnings of one kind per window (`LogRateLimiter`).
    static let warningBurst = 10
    /// The length of such a window.
    static let warningWindow: Duration = .seconds(5)

    /// The bound asserted on the coordinator's peak memory growth: what its queues can hold by
    /// construction (their high-water marks × what a message in them costs), plus the fixed
    /// allowance.
    static func peakGrowthBound(queued: Int) -> Int {
        queued + fixedAllowance
    }

    /// The most memory a receive queue of `messages` messages of `frames` frames and `bytes`
    /// bytes in all takes in libzmq: their frames, or the read buffer each may keep alive.
    static func receiveQueue(_ messages: Int, frames: Int, bytes: Int) -> Int {
        messages * max(readBufferBytes, frames * frameOverhead + bytes)
    }

    /// The same for a send queue, whose frames `zmq_send` copied one by one.
    static func sendQueue(_ messages: Int, frames: Int, bytes: Int) -> Int {
        messages * (frames * frameOverhead + bytes)
    }

    @Test("a garbage flood: bounded memory, a few warnings and a summary line, the workers kept and served")
    func garbageFlood() async throws {
        let (count, size, peers) = (200_000, 4096, 2)
        try await ClusterFixture.with("flood-garbage") { cluster in
            let (coordinator, worker2) = try await Self.settledCluster(cluster)
            let baseline = try Self.startMeasuring(coordinator)
            let started = ContinuousClock.now
            let sent = try await Self.flood(cluster, "garbage", count: count, size: size, peers: peers)

            // Every message was handled once the log accounts for all of them: a warning line
            // each for the first few per window, the rest in the windows' summary lines.
            let kind = "malformed message from a peer dropped"
            let (lines, summaries) = try await Self.warnings(of: kind, in: coordinator, accountingFor: count)
            let elapsed = ContinuousClock.now - started
            let peak = try ProcessMemory(pid: coordinator.pid).peakResident

            // (b) Each flooding connection can make the coordinator hold at most a receive
            // queue of its messages; the few ERROR replies (rate-limited with the warnings) and
            // the log lines are noise next to that.
            let bound = Self.peakGrowthBound(queued: peers * Self.receiveQueue(Self.receiveHighWaterMark, frames: 1, bytes: size))
            Self.report("garbage", sent: sent, messages: count, baseline: baseline, peak: peak, bound: bound, lines: lines.count + summaries.count)
            #expect(peak - baseline < bound, "peak \(peak.mebibytes) from \(baseline.mebibytes) after \(sent.mebibytes) sent")
            #expect(bound < sent / 10)

            // (c) At most `warningBurst` lines per window the flood spanned, and a summary.
            let windows = Int(elapsed / Self.warningWindow) + 1
            #expect(lines.count <= Self.warningBurst * windows, "\(lines.count) warning lines in \(elapsed)")
            #expect(!summaries.isEmpty && summaries.count <= windows)
            #expect(lines.allSatisfy { $0.contains("peer=") }, "each warning names the peer")

            // (a) Alive, the workers kept, and serving them.
            try await Self.expectStillServing(cluster, coordinator: coordinator, worker2: worker2)
        }
    }

    @Test("a HELLO flood on one connection: one join, WELCOMEs it never reads dropped at the high-water mark")
    func helloFlood() async throws {
        let (count, size) = (150_000, 8192)
        try await ClusterFixture.with("flood-hello") { cluster in
            let (coordinator, worker2) = try await Self.settledCluster(cluster)
            let baseline = try Self.startMeasuring(coordinator)
            let sent = try await Self.flood(cluster, "hello", count: count, size: size, peers: 1)

            // The intruder is dropped once silent (or unreachable), i.e. after the coordinator
            // handled its last HELLO.
            try await coordinator.stderr.first("the intruder to be dropped") { $0.contains("worker left") && $0.contains("worker=intruder") }
            let peak = try ProcessMemory(pid: coordinator.pid).peakResident

            // A repeated HELLO is answered, not a new join: one "worker joined" line.
            let joins = coordinator.stderr.lines.filter { $0.contains("worker joined") && $0.contains("worker=intruder") }
            #expect(joins.count == 1, "\(joins.count) join lines for one connection")
            // More WELCOMEs than the send queue holds: the rest were dropped (and said so, a
            // few times), never queued in the coordinator.
            #expect(coordinator.stderr.lines.contains { $0.contains("cannot send to a worker") })

            // Its receive queue of HELLOs, and a full send queue of WELCOMEs it never reads.
            let welcome = try BinaryWireCodec().encode(WelcomeMirror(parentName: "coordinator", heartbeatIntervalMilliseconds: 100))
            let bound = Self.peakGrowthBound(
                queued: Self.receiveQueue(Self.receiveHighWaterMark, frames: 2, bytes: sent / count)
                    + Self.sendQueue(Self.sendHighWaterMark, frames: 2, bytes: EnvelopeHeader.fixedSize + welcome.count))
            Self.report("hello", sent: sent, messages: count, baseline: baseline, peak: peak, bound: bound, lines: coordinator.stderr.count)
            #expect(peak - baseline < bound, "peak \(peak.mebibytes) from \(baseline.mebibytes) after \(sent.mebibytes) sent")
            #expect(bound < sent / 10)

            try await Self.expectStillServing(cluster, coordinator: coordinator, worker2: worker2)
        }
    }

    @Test("messages slow to handle: the coordinator's loop keeps its heartbeats going, no worker is lost")
    func slowFlood() async throws {
        // About 150 µs each for a debug coordinator to decode: a loop that handled them in
        // batches of thousands without running its timers would fall silent for seconds.
        let (count, size) = (20_000, 8192)
        try await ClusterFixture.with("flood-slow") { cluster in
            let (coordinator, worker2) = try await Self.settledCluster(cluster)
            let sent = try await Self.flood(cluster, "slow-hello", count: count, size: size, peers: 1)
            try await coordinator.stderr.first("the intruder to be dropped") { $0.contains("worker left") && $0.contains("worker=intruder") }
            print("flood slow-hello: \(count) messages, \(sent.mebibytes) sent")
            try await Self.expectStillServing(cluster, coordinator: coordinator, worker2: worker2)
        }
    }

    @Test("messages over the size limit: the sender is disconnected each time, none is taken in")
    func oversizeFlood() async throws {
        // The coordinator's default maxMessageSize is 16 MiB.
        let (count, size) = (20, 17 << 20)
        try await ClusterFixture.with("flood-oversize") { cluster in
            let (coordinator, worker2) = try await Self.settledCluster(cluster)
            let baseline = try Self.startMeasuring(coordinator)
            let flooder = try cluster.start(
                "zmq-test-peer", ["flood", cluster.endpoint, "\(count)", "\(size)", "oversize"], label: "flooder")
            #expect(try await flooder.waitForExit() == 0, "\(flooder.stderr.lines)")
            #expect(flooder.stdout.lines.contains { $0.hasSuffix("disconnected \(count) times") }, "\(flooder.stdout.lines)")
            let peak = try ProcessMemory(pid: coordinator.pid).peakResident

            // Not one of them was held whole: libzmq reads the size first and hangs up.
            Self.report("oversize", sent: count * size, messages: count, baseline: baseline, peak: peak, bound: size, lines: coordinator.stderr.count)
            #expect(peak - baseline < size, "peak \(peak.mebibytes) from \(baseline.mebibytes)")

            try await Self.expectStillServing(cluster, coordinator: coordinator, worker2: worker2)
        }
    }

    // MARK: Steps

    /// A coordinator with both demo workers, its tree rendered across them.
    static func settledCluster(_ cluster: ClusterFixture) async throws -> (coordinator: DaemonProcess, worker2: DaemonProcess) {
        let coordinator = try await cluster.startCoordinator()
        try await cluster.startWorker("worker-1")
        let worker2 = try await cluster.startWorker("worker-2")
        try await coordinator.stdout.first("the settled tree", where: ListDetailFrame.rendered(list: "worker-1", detail: "worker-2"))
        return (coordinator, worker2)
    }

    /// The coordinator's resident size now, with its peak restarted from here.
    static func startMeasuring(_ coordinator: DaemonProcess) throws -> Int {
        let baseline = try ProcessMemory(pid: coordinator.pid).resident
        // Best effort: without it, the peak also counts start-up and the bound only gets stricter.
        try? ProcessMemory.resetPeak(pid: coordinator.pid)
        return baseline
    }

    /// Runs the flooder to its end (every message has left its sockets); returns the bytes sent.
    static func flood(_ cluster: ClusterFixture, _ kind: String, count: Int, size: Int, peers: Int) async throws -> Int {
        let flooder = try cluster.start(
            "zmq-test-peer", ["flood", cluster.endpoint, "\(count)", "\(size)", kind, "\(peers)"], label: "flooder")
        #expect(try await flooder.waitForExit() == 0, "\(flooder.stderr.lines)")
        let summary = try #require(flooder.stdout.lines.first { $0.hasPrefix("flood sent \(count) messages") })
        return try #require(Int(summary.split(separator: " ")[4]))
    }

    /// Waits until the warnings of `kind` — one line each, or counted in a summary line —
    /// account for `total` messages; returns the warning lines and the summary lines.
    static func warnings(of kind: String, in daemon: DaemonProcess, accountingFor total: Int) async throws -> (lines: [String], summaries: [String]) {
        try await withSafetyTimeout("warnings accounting for \(total) messages") {
            var lines: [String] = []
            var summaries: [String] = []
            var accounted = 0
            for await line in daemon.stderr.lines(from: 0) where line.contains(kind) {
                if let suppressed = line.range(of: "suppressed=").flatMap({ Int(line[$0.upperBound...].prefix(while: \.isNumber)) }) {
                    summaries.append(line)
                    accounted += suppressed
                } else {
                    lines.append(line)
                    accounted += 1
                }
                if accounted >= total { break }
            }
            guard accounted == total else { throw WaitFailure(description: "warnings account for \(accounted) of \(total) messages") }
            return (lines, summaries)
        }
    }

    /// The flood lost the coordinator no worker, and it still serves them: worker-2 stopped
    /// makes the message pane unavailable, and restarted it renders the pane again.
    static func expectStillServing(_ cluster: ClusterFixture, coordinator: DaemonProcess, worker2: DaemonProcess) async throws {
        #expect(coordinator.isRunning)
        let lost = coordinator.stderr.lines.filter { $0.contains("worker left") && $0.contains("worker=worker-") }
        #expect(lost.isEmpty, "workers lost during the flood: \(lost)")
        let mark = coordinator.stdout.count
        #expect(try await worker2.terminate() == 0)
        try await coordinator.stdout.first("the message pane unavailable", from: mark, where: StatusLine.matching("DetailPaneWorkflow", "unavailable"))
        let rejoin = coordinator.stdout.count
        try await cluster.startWorker("worker-2")
        try await coordinator.stdout.first("the message pane rendered by worker-2 again", from: rejoin, where: ListDetailFrame.rendered(list: "worker-1", detail: "worker-2"))
    }

    /// WELCOME's payload as docs/WIRE-PROTOCOL.md §10 defines it.
    struct WelcomeMirror: Codable {
        var parentName: String
        var heartbeatIntervalMilliseconds: Int
    }

    /// The figures, for the test log (and docs/OPERATIONS.md).
    static func report(_ name: String, sent: Int, messages: Int, baseline: Int, peak: Int, bound: Int, lines: Int) {
        print(
            "flood \(name): \(messages) messages, \(sent.mebibytes) sent; coordinator RSS \(baseline.mebibytes), peak \(peak.mebibytes)"
                + " (+\((peak - baseline).mebibytes), bound \(bound.mebibytes)); \(lines) log lines")
    }
}
