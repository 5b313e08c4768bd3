import WireProtocol
@_spi(WorkflowRuntime) import Workflow

/// Encodes a hosted child's renderings and outputs and hands them to the worker's driver, which
/// flushes them to the parent. Called by the child's host on the loop thread.
struct HostedChildForwarder: Sendable {
    let childID: UInt64
    let path: String
    let exporter: SinkTable
    let bound: LoopBound<WorkerDriver>
    /// The driver's codec with the child's sink table in its encoder context, made once rather
    /// than for every output.
    let codec: any WireCodec

    init(childID: UInt64, path: String, exporter: SinkTable, bound: LoopBound<WorkerDriver>, codec: any WireCodec) {
        self.childID = childID
        self.path = path
        self.exporter = exporter
        self.bound = bound
        self.codec = codec.with(userInfo: [.workflowSinkExporter: SinkTransport<any SinkExporter>(exporter)])
    }

    /// Encodes at once, not at flush: encoding is what registers the rendering's sinks in the
    /// child's sink table, and events for them may arrive before the flush (a replay after a
    /// failover arrives right behind START).
    func rendering<R: Encodable>(_ rendering: R, propsSequence: UInt64) {
        let driver = bound.value
        do {
            let bytes = try codec.encode(rendering, reusing: driver.codingScratch)
            driver.enqueue(rendering: bytes, sequence: propsSequence, childID: childID, path: path)
        } catch {
            driver.logger.error("a rendering does not encode and was not sent: \(error)", metadata: ["path": "\(path)"])
        }
    }

    func output<O: Encodable>(_ output: O) {
        let driver = bound.value
        do {
            let bytes = try codec.encode(output, reusing: driver.codingScratch)
            driver.enqueue(output: bytes, childID: childID, path: path)
        } catch {
            driver.logger.error("an output does not encode and was dropped: \(error)", metadata: ["path": "\(path)"])
        }
    }
}
