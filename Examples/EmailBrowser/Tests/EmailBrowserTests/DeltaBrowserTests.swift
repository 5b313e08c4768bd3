import Foundation
import Testing
import WorkflowClusterTesting

/// The client library's deltas in a real browser (headless Chromium) on a real coordinator with
/// two real workers: its applier against the Swift diff's vectors, a click as one small delta
/// marked pending until shown, and a dropped connection resumed with a delta.
@Suite("Deltas in the browser")
struct DeltaBrowserTests {
    /// The vectors the gateway's tests keep current (`JSONDeltaTests.vectorsAreCurrent`).
    static let vectors = repositoryFolder(holding: "Tests/Fixtures/json-delta-vectors.json", from: #filePath)?
        .appendingPathComponent("Tests/Fixtures/json-delta-vectors.json")

    /// The page's client, live in its own session with both panes rendered by their workers.
    static let live = BrowserTests.sessionLive

    @Test(
        "applyDelta in Chromium gives the Swift diff's new value for each of the 300 vectors",
        .enabled(if: Chromium.path != nil, "chromium is not installed here (scripts/test.sh installs it with apt-get)"))
    func applierMatchesTheDiff() async throws {
        let vectors = try String(contentsOf: try #require(Self.vectors), encoding: .utf8)
        try await BrowserCluster.with("browser-delta-vectors") { cluster in
            let coordinator = try await cluster.startCoordinator()
            let baseURL = try await BrowserCluster.gatewayURL(of: coordinator)
            let browserEndpoint = try await Chromium.start(in: cluster)
            try await withSafetyTimeout("the vectors in chromium") {
                try await Chromium.drive(browserEndpoint) { browser in
                    try await browser.navigate(baseURL + "/workflow-client.js")
                    let failures = try await browser.evaluate(
                        """
                        import("/workflow-client.js").then(({ applyDelta }) => {
                          const canonical = value => Array.isArray(value) ? "[" + value.map(canonical).join(",") + "]"
                            : value !== null && typeof value === "object"
                              ? "{" + Object.keys(value).sort().map(key => JSON.stringify(key) + ":" + canonical(value[key])).join(",") + "}"
                              : JSON.stringify(value);
                          const vectors = \(vectors);
                          const failures = [];
                          for (const [index, vector] of vectors.entries()) {
                            const before = canonical(vector.old);
                            let result;
                            try { result = canonical(applyDelta(vector.old, vector.ops)); } catch (error) { result = "threw " + error.message; }
                            if (result !== canonical(vector.new)) failures.push(index + ": " + result);
                            if (canonical(vector.old) !== before) failures.push(index + ": the old value was changed in place");
                          }
                          return failures.slice(0, 5).join("\\n") + (vectors.length === 300 ? "" : "only " + vectors.length + " vectors");
                        })
                        """) as? String
                    #expect(failures == "", "\(failures ?? "no answer")")
                    let refused = try await browser.evaluate(
                        """
                        import("/workflow-client.js").then(({ applyDelta }) => {
                          try { applyDelta({ rows: [{ id: 1 }] }, [{ op: "keyed", path: ["rows"], by: "id", remove: [7] }]); return "applied"; }
                          catch (error) { return error.message; }
                        })
                        """) as? String
                    #expect(refused == "no element keyed 7 to remove")
                }
            }
            #expect(try await coordinator.terminate() == 0)
        }
    }

    @Test(
        "a click arrives as one delta far smaller than the whole frame, marked pending until a rendering shows it; a dropped connection resumes with a delta, no whole frame",
        .enabled(if: Chromium.path != nil, "chromium is not installed here (scripts/test.sh installs it with apt-get)"))
    func clickAndResumeAsDeltas() async throws {
        try await BrowserCluster.with("browser-deltas") { cluster in
            let coordinator = try await cluster.startCoordinator()
            let baseURL = try await BrowserCluster.gatewayURL(of: coordinator)
            try await cluster.startWorker("worker-1")
            try await cluster.startWorker("worker-2")
            let browserEndpoint = try await Chromium.start(in: cluster)
            try await withSafetyTimeout("a click and a resume as deltas") {
                try await Chromium.drive(browserEndpoint) { browser in
                    try await browser.navigate(baseURL + "/")
                    try await browser.waitUntil(Self.live)
                    try await browser.evaluate("window.before = { ...workflowClient.received }; true")
                    // The click is pending at once, and the row says so, until its rendering shows it.
                    let pendingAtOnce = try await browser.evaluate(
                        """
                        (() => {
                          document.querySelector('button[data-id="3"]').click();
                          return workflowClient.pending.length === 1 && workflowClient.pending[0].event === 3
                            && document.getElementById('pending').textContent.includes('1 click waiting');
                        })()
                        """) as? Bool
                    #expect(pendingAtOnce == true, "the click is pending as soon as it is sent")
                    try await browser.waitUntil("\(BrowserTests.selected(3)) && workflowClient.pending.length === 0")
                    #expect(try await browser.evaluate("document.getElementById('pending').textContent") as? String == "")
                    let click = try #require(
                        try await browser.evaluate(
                            """
                            fetch(workflowClient.base + workflowClient.path("/rendering")).then(r => r.text()).then(whole => JSON.stringify({
                              whole: whole.length, bytes: workflowClient.received.bytes - window.before.bytes,
                              deltas: workflowClient.received.delta - window.before.delta, wholes: workflowClient.received.whole - window.before.whole }))
                            """) as? String)
                    let figure = try JSONDecoder().decode(ClickFigure.self, from: Data(click.utf8))
                    print("deltas: email browser, bytes per click: \(figure.bytes) B in \(figure.deltas) delta(s), whole frame \(figure.whole) B")
                    #expect(figure.wholes == 0 && figure.deltas >= 1, "\(click)")
                    #expect(figure.bytes * 2 < figure.whole * figure.deltas, "each delta well under the whole frame: \(click)")
                    let outcome = try await browser.evaluate(
                        "workflowClient.send(r => r.inbox.onMessageSelected, 5).then(o => o.shown).then(shown => shown && workflowClient.rendering.message.messageID)")
                    #expect(outcome as? Int == 5, "the outcome's shown resolves once the rendering shows the event")

                    // The connection drops (the coordinator runs on): the client resumes from the
                    // last sequence it applied, with a delta, never a whole frame.
                    try await browser.evaluate(
                        "window.before = { ...workflowClient.received, connections: workflowClient.connections }; workflowClient.socket.close(); true")
                    try await browser.waitUntil("\(Self.live) && workflowClient.connections > window.before.connections")
                    try await browser.evaluate("document.querySelector('button[data-id=\"4\"]').click(); true")
                    try await browser.waitUntil(BrowserTests.selected(4))
                    #expect(
                        try await browser.evaluate("workflowClient.received.whole === window.before.whole && workflowClient.received.delta > window.before.delta")
                            as? Bool == true, "resumed with deltas only")
                }
            }
            #expect(try await coordinator.terminate() == 0)
        }
    }

    struct ClickFigure: Decodable {
        var whole: Int
        var bytes: Int
        var deltas: Int
        var wholes: Int
    }
}
