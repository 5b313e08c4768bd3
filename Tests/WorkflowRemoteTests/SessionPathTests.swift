import Testing
import WorkflowRemote

/// A runtime path's tree (`SessionLoop.treePrefix(of:)`): its session's prefix, or `""` for the
/// shared root's paths. Read by bytes; these pin what it answers.
@Suite("Session paths")
struct SessionPathTests {
    @Test("a session's paths give its prefix; the shared root's, and anything not starting /~, give none")
    func treePrefixes() {
        let prefix = SessionLoop.pathPrefix(scope: "a1-b_2")
        #expect(prefix == "/~a1-b_2")
        #expect(SessionLoop.treePrefix(of: prefix + "/RemoteTestSupport.CounterBoardWorkflow/Remote<X>[c]") == prefix)
        #expect(SessionLoop.treePrefix(of: prefix) == prefix)
        #expect(SessionLoop.treePrefix(of: prefix + "/") == prefix)
        #expect(SessionLoop.treePrefix(of: "/~") == "/~")
        #expect(SessionLoop.treePrefix(of: "/~/x") == "/~")
        #expect(SessionLoop.treePrefix(of: "/~é/x") == "/~é")
        #expect(SessionLoop.treePrefix(of: "/RemoteTestSupport.CounterBoardWorkflow/Remote<X>[c]") == "")
        #expect(SessionLoop.treePrefix(of: "/") == "")
        #expect(SessionLoop.treePrefix(of: "") == "")
        #expect(SessionLoop.treePrefix(of: "~a/x") == "")
        #expect(SessionLoop.treePrefix(of: "//~a") == "")
    }
}
