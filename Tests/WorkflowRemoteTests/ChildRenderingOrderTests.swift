import Testing
@testable import WorkflowRemote

/// Which rendering of a remote child the parent shows, without a proxy: props numbered as sent,
/// renderings taken only for props sent and never older than one received, flushes staged for the
/// node in order.
@Suite struct ChildRenderingOrderTests {
    @Test("props are numbered as sent; the parent waits for a rendering of the last ones only while the child is placed")
    func awaitingTheLastProps() {
        var order = ChildRenderingOrder()
        #expect(!order.isAwaitingRendering(placed: true), "no props sent yet")
        #expect(order.propsSent() == 1)
        #expect(order.isAwaitingRendering(placed: true))
        #expect(!order.isAwaitingRendering(placed: false), "no worker to answer")
        order.received(renderingFor: 1)
        #expect(!order.isAwaitingRendering(placed: true))
        #expect(order.propsSent() == 2)
        #expect(order.propsSequence == 2)
        #expect(order.isAwaitingRendering(placed: true), "a rendering of the first props does not answer the second")
    }

    @Test("a rendering is taken only for props sent and not older than one received")
    func acceptedRenderings() {
        var order = ChildRenderingOrder()
        order.propsSent()
        order.propsSent()
        order.propsSent()
        #expect(!order.accepts(renderingFor: 4), "props never sent")
        #expect(order.accepts(renderingFor: 2))
        order.received(renderingFor: 2)
        #expect(order.receivedSequence == 2)
        #expect(!order.accepts(renderingFor: 1), "older than one received")
        #expect(order.accepts(renderingFor: 2), "the same props again (a later rendering of them)")
        #expect(order.accepts(renderingFor: 3))
    }

    @Test("installing: an older rendering is dropped; the awaited one is shown by the settling pass; any other needs a render")
    func installation() {
        var order = ChildRenderingOrder()
        order.propsSent()
        #expect(order.install(renderingFor: 1, placed: true) == .awaited)
        #expect(order.installedSequence == 1)
        #expect(order.install(renderingFor: 1, placed: true) == .unasked, "a new rendering of the same props: nobody waits for it")
        order.propsSent()
        #expect(order.install(renderingFor: 1, placed: true) == .awaited, "the settle of props 2 waits: its pass renders anyway")
        #expect(order.install(renderingFor: 2, placed: false) == .unasked, "no worker: no settle waits")
        #expect(order.install(renderingFor: 1, placed: true) == .stale)
        #expect(order.installedSequence == 2, "a stale rendering changes nothing")
    }

    @Test("flushes staged for the node are counted until applied, never below none")
    func stagedFlushes() {
        var order = ChildRenderingOrder()
        #expect(!order.hasStagedFlushes)
        order.flushStaged()
        order.flushStaged()
        order.flushApplied()
        #expect(order.hasStagedFlushes, "one still waits")
        order.flushApplied()
        #expect(!order.hasStagedFlushes)
        order.flushApplied()
        #expect(order.stagedFlushes == 0)
        order.flushStaged()
        #expect(order.stagedFlushes == 1, "an extra application does not let a later flush skip the queue")
    }
}
