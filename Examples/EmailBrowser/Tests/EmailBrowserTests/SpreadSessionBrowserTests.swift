import Foundation
import Testing
import WorkflowClusterTesting

/// A page whose session another coordinator owns (sessions spread over two coordinators sharing
/// one private PostgreSQL store, each with workers of its own), in a real browser: the page
/// follows its session there, and back when that coordinator dies.
@Suite("Browser, sessions spread over coordinators")
struct SpreadSessionBrowserTests {
    typealias Page = BrowserTests

    /// The page's connection, as the client and the page both say it.
    static func connection(_ state: String, _ words: String) -> String {
        "workflowClient.state === '\(state)' && document.getElementById('connection').textContent === '\(words)'"
    }

    /// Loads `gateway`'s page in the tab, remembering session `id` for it, as a tab does whose
    /// page load a load balancer sent to another coordinator than the session's (`query` makes
    /// it a new document).
    static func open(_ gateway: String, remembering id: String, _ browser: inout DevToolsSession, query: String) async throws {
        try await browser.navigate(gateway + "/#shared")
        try await browser.waitUntil("workflowClient.state === 'live'")
        try await browser.evaluate("sessionStorage.setItem('workflow-session::email-browser', '\(id)'); true")
        try await browser.navigate(gateway + "/?" + query)
    }

    @Test(
        "a page loaded from coordinator A whose session B owns follows it to B and works there (clicks across origins); B SIGKILLed, A takes the session over and the page resumes by itself, its state kept; a coordinator advertising a wrong URL sends the page in circles: it stops, failed, saying why",
        .enabled(if: Chromium.path != nil, "chromium is not installed here (scripts/test.sh installs it with apt-get)"),
        .enabled(if: PrivatePostgres.unavailableReason == nil, "\(PrivatePostgres.unavailableReason ?? "")"))
    func pageFollowsItsSession() async throws {
        let ports = [try LoopbackPort.unused(), try LoopbackPort.unused(), try LoopbackPort.unused()]
        let urls = ports.map { "http://127.0.0.1:\($0)" }
        try await PrivatePostgres.with { server in
            let spread = BrowserCluster.Spread(store: server.url, allowedOrigins: urls)
            try await BrowserCluster.with("browser-follow", spread: spread) { cluster in
                var coordinators: [DaemonProcess] = []
                for index in 0..<2 {
                    coordinators.append(
                        try await cluster.startCoordinator(index, gatewayPort: ports[index], role: "leader", ["--sessions-advertised-url", urls[index]]))
                    try await cluster.startWorker("worker-1", coordinator: index)
                    try await cluster.startWorker("worker-2", coordinator: index)
                }
                let (a, b) = (urls[0], urls[1])
                let (coordinatorA, coordinatorB) = (coordinators[0], coordinators[1])
                let browserEndpoint = try await Chromium.start(in: cluster)
                try await withSafetyTimeout("a page on A following its session to B") {
                    try await Chromium.drive(browserEndpoint) { browser in
                        // The session: created by B's page in this tab, message 3 selected.
                        try await browser.navigate(b + "/")
                        try await browser.waitUntil(Page.sessionLive)
                        try await browser.evaluate("document.querySelector('button[data-id=\"3\"]').click(); true")
                        try await browser.waitUntil(Page.selected(3))
                        let id = try #require(try await browser.evaluate("workflowClient.sessionID") as? String)

                        // The tab on A's page, remembering that session (as when a load balancer sends a
                        // page load to another coordinator than the one its session lives on).
                        try await Self.open(a, remembering: id, &browser, query: "resumed")
                        try await browser.waitUntil("\(Page.sessionLive) && workflowClient.base === '\(b)' && \(Page.selected(3))")
                        #expect(try await browser.evaluate("workflowClient.sessionID") as? String == id, "the same session, on B")
                        #expect(try await browser.evaluate("location.origin") as? String == a, "the page is A's")
                        #expect(try await browser.evaluate(Self.connection("live", "live")) as? Bool == true)
                        // A click is an event posted to B across origins.
                        try await browser.evaluate("document.querySelector('button[data-id=\"4\"]').click(); true")
                        try await browser.waitUntil(Page.selected(4))
                        #expect(try await browser.evaluate("document.getElementById('click-outcome').textContent") as? String == "")
                        try await browser.evaluate(
                            "window.before = { session: workflowClient.sessionID, sequence: workflowClient.sequence, connections: workflowClient.connections }; true")
                    }
                }
                try await withSafetyTimeout("the page back on A once B is SIGKILLed") {
                    try await Chromium.drive(browserEndpoint) { browser in
                        // B dies: the page reconnects by itself to A, which takes the session over
                        // once B's lease has run out.
                        coordinatorB.forceKill()
                        _ = try await coordinatorB.waitForExit()
                        try await browser.waitUntil(Self.connection("reconnecting", "reconnecting…"))
                        try await browser.waitUntil(
                            "\(Page.sessionLive) && workflowClient.base === '' && workflowClient.connections > window.before.connections && \(Page.selected(4))")
                        #expect(try await browser.evaluate("workflowClient.sessionID === window.before.session") as? Bool == true, "the same session, on A")
                        #expect(try await browser.evaluate("workflowClient.sequence >= window.before.sequence") as? Bool == true, "the sequence never goes back")
                        try await browser.evaluate("document.querySelector('button[data-id=\"5\"]').click(); true")
                        try await browser.waitUntil(Page.selected(5))
                        #expect(coordinatorA.stderr.lines.contains { $0.contains("session taken over from the store") }, "A took the session over")
                    }
                }
                // A third coordinator advertises A's URL instead of its own (a wrong
                // sessions.advertised_url): its session, asked of A, is sent to A again and again.
                // The page stops after a few hops and says why.
                let wrong = try cluster.start(
                    "workflow-coordinator",
                    [
                        "--config", cluster.configPath, "--print-renderings", "json", "--endpoint", cluster.endpoint + "-c",
                        "--gateway-listen", "127.0.0.1:\(ports[2])", "--sessions-advertised-url", a,
                    ],
                    label: "coordinator-wrong")
                _ = try await BrowserCluster.gatewayURL(of: wrong)
                try await withSafetyTimeout("a page sent in circles stopping") {
                    try await Chromium.drive(browserEndpoint) { browser in
                        try await browser.navigate(urls[2] + "/")
                        try await browser.waitUntil("workflowClient.state === 'live' && workflowClient.sessionID")
                        let circled = try #require(try await browser.evaluate("workflowClient.sessionID") as? String)
                        try await Self.open(a, remembering: circled, &browser, query: "circled")
                        try await browser.waitUntil("workflowClient.state === 'failed'")
                        #expect(try await browser.evaluate("workflowClient.error.code") as? String == "redirect-loop")
                        let words = try await browser.evaluate("document.getElementById('connection').textContent") as? String ?? ""
                        #expect(words.hasPrefix("failed: ") && words.contains("sessions.advertised_url"), "\(words)")
                        #expect(try await browser.evaluate("workflowClient.hops === 0 && workflowClient.base === ''") as? Bool == true)
                    }
                }
            }
        }
    }
}
