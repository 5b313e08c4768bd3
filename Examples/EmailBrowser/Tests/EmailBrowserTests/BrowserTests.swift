import Foundation
import WorkflowClusterTesting
import Testing

/// The email browser's page and the inspector in a real browser (headless Chromium), served by a
/// real coordinator with two real workers.
@Suite("Browser")
struct BrowserTests {
    /// Where screenshots are also copied (`WORKFLOW_SCREENSHOT_DIR`, e.g. `docs/` from demo.sh).
    static let screenshotDirectory = ProcessInfo.processInfo.environment["WORKFLOW_SCREENSHOT_DIR"]

    static func save(_ png: Data, _ name: String, fixture: BrowserCluster) throws {
        try png.write(to: fixture.directory.appendingPathComponent(name))
        if let directory = screenshotDirectory {
            try png.write(to: URL(fileURLWithPath: directory).appendingPathComponent(name))
        }
    }

    @Test(
        "the page: a click selects a message rendered by worker-2; a killed worker shows unavailable and comes back; the inspector shows both workers",
        .enabled(if: Chromium.path != nil, "chromium is not installed here (scripts/test.sh installs it with apt-get)"))
    func pageInChromium() async throws {
        try await BrowserCluster.with("browser") { cluster in
            let coordinator = try await cluster.startCoordinator()
            let baseURL = try await BrowserCluster.gatewayURL(of: coordinator)
            try await cluster.startWorker("worker-1")
            try await cluster.startWorker("worker-2")
            try await coordinator.stdout.first("both panes running") { BrowserFrame.rendered(inbox: "worker-1", message: "worker-2")($0) }

            let browserEndpoint = try await Chromium.start(in: cluster)
            try await withSafetyTimeout("the page in chromium") {
                try await Chromium.drive(browserEndpoint) { browser in
                    try await browser.navigate(baseURL + "/")
                    let inboxBy = "document.getElementById('inbox-by').textContent"
                    let messageBy = "document.getElementById('message-by').textContent"
                    try await browser.waitUntil(
                        "\(inboxBy) === 'rendered by worker-1' && \(messageBy) === 'rendered by worker-2' && document.querySelector('button[data-id=\"3\"]')")
                    try await browser.evaluate("document.querySelector('button[data-id=\"3\"]').click(); true")
                    try await browser.waitUntil(
                        "document.getElementById('message-body').dataset.messageId === '3' && \(messageBy) === 'rendered by worker-2'"
                            + " && document.querySelector('button[data-id=\"3\"]').classList.contains('selected')")
                    let subject = try await browser.evaluate("document.getElementById('message-subject').textContent") as? String
                    #expect(subject?.hasSuffix("#3") == true, "\(subject ?? "no subject")")
                    try Self.save(try await browser.screenshot(), "email-browser.png", fixture: cluster)
                }
            }

            // The message pane's worker dies: the page says so, then recovers by itself.
            let worker2 = try #require(cluster.daemon(labelled: "worker-2"))
            worker2.forceKill()
            try await withSafetyTimeout("the pane unavailable, then back") {
                try await Chromium.drive(browserEndpoint) { browser in
                    try await browser.waitUntil("document.getElementById('message-pane').classList.contains('down')")
                    #expect(try await browser.evaluate("document.getElementById('message-by').textContent") as? String == "unavailable")
                    try await cluster.startWorker("worker-2")
                    try await browser.waitUntil(
                        "!document.getElementById('message-pane').classList.contains('down')"
                            + " && document.getElementById('message-by').textContent === 'rendered by worker-2'")
                    try await browser.navigate(baseURL + "/inspector")
                    try await browser.waitUntil(
                        "document.querySelector('tr[data-worker=\"worker-1\"]') && document.querySelector('tr[data-worker=\"worker-2\"]')"
                            + " && document.querySelectorAll('.node.status-running').length === 2")
                    try await browser.call(
                        "Emulation.setDeviceMetricsOverride", ["width": 1100, "height": 760, "deviceScaleFactor": 1, "mobile": false])
                    try Self.save(try await browser.screenshot(), "inspector.png", fixture: cluster)
                }
            }
        }
    }

    /// A condition: message `id` shown in the message pane and marked selected in the inbox.
    static func selected(_ id: Int) -> String {
        "document.getElementById('message-body').dataset.messageId === '\(id)'"
            + " && document.querySelector('button[data-id=\"\(id)\"]').classList.contains('selected')"
    }

    @Test(
        "the shared root's page (#shared) through a coordinator restart: reconnecting, then the same selection live again (SQLite store); clicks work; old tokens answer 410 restarted or still deliver",
        .enabled(if: Chromium.path != nil, "chromium is not installed here (scripts/test.sh installs it with apt-get)"))
    func pageSurvivesCoordinatorRestart() async throws {
        try await BrowserCluster.with("browser-restart") { cluster in
            let store = ["--store-kind", "sqlite", "--store-path", cluster.directory.appendingPathComponent("coordinator.sqlite").path]
            var coordinator = try await cluster.startCoordinator(store)
            let baseURL = try await BrowserCluster.gatewayURL(of: coordinator)
            try await cluster.startWorker("worker-1")
            try await cluster.startWorker("worker-2")
            try await coordinator.stdout.first("both panes running") { BrowserFrame.rendered(inbox: "worker-1", message: "worker-2")($0) }

            let browserEndpoint = try await Chromium.start(in: cluster)
            let live = "workflowClient.state === 'live' && document.getElementById('connection').textContent === 'live'"
            try await withSafetyTimeout("the page selects message 3") {
                try await Chromium.drive(browserEndpoint) { browser in
                    try await browser.navigate(baseURL + "/#shared")
                    try await browser.waitUntil("\(live) && document.querySelector('button[data-id=\"3\"]')")
                    try await browser.evaluate("document.querySelector('button[data-id=\"3\"]').click(); true")
                    try await browser.waitUntil(Self.selected(3))
                    try await browser.evaluate(
                        "window.before = { token: workflowClient.rendering.inbox.onMessageSelected, sequence: workflowClient.sequence,"
                            + " whole: workflowClient.received.whole, delta: workflowClient.received.delta }; true")
                }
            }

            // The coordinator stops; the page says so and reconnects by itself when it is back.
            #expect(try await coordinator.terminate() == 0)
            try await withSafetyTimeout("the page reports reconnecting") {
                try await Chromium.drive(browserEndpoint) { browser in
                    try await browser.waitUntil("workflowClient.state === 'reconnecting' && document.getElementById('connection').textContent === 'reconnecting…'")
                }
            }
            let port = try #require(URL(string: baseURL)?.port)
            coordinator = try await cluster.startCoordinator(store + ["--gateway-listen", "127.0.0.1:\(port)"])
            try await withSafetyTimeout("the page live again, the selection kept, a click applied") {
                try await Chromium.drive(browserEndpoint) { browser in
                    try await browser.waitUntil("\(live) && workflowClient.connections >= 2 && \(Self.selected(3))")
                    #expect(try await browser.evaluate("workflowClient.sequence >= window.before.sequence") as? Bool == true, "the sequence never goes back")
                    // The frame the page had is kept with the checkpoint: it resumes with a delta.
                    #expect(
                        try await browser.evaluate("workflowClient.received.whole === window.before.whole && workflowClient.received.delta > window.before.delta")
                            as? Bool == true, "resumed with a delta, no whole frame")
                    // An earlier run's token: still delivered, or a distinct 410 after which the client holds the new rendering.
                    let outcome = try await browser.evaluate(
                        "workflowClient.send(window.before.token, 4).then(o => JSON.stringify({ status: o.status, code: o.code }))") as? String
                    #expect(outcome == #"{"status":202,"code":"sent"}"# || outcome == #"{"status":410,"code":"restarted"}"#, "\(outcome ?? "none")")
                    try await browser.evaluate("document.querySelector('button[data-id=\"5\"]').click(); true")
                    try await browser.waitUntil(Self.selected(5))
                }
            }
            #expect(try await coordinator.terminate() == 0)
        }
    }

    /// A tab of a test with two people's tabs: its DevTools page and the message it selected.
    typealias Tab = (page: String, selected: Int)

    /// Loaded and browsing in a session of its own, its remote panes rendered by the workers.
    static let sessionLive = "workflowClient.state === 'live' && workflowClient.sessionID && document.querySelector('button[data-id=\"5\"]')"
        + " && document.getElementById('message-by').textContent === 'rendered by worker-2'"

    /// Opens two tabs (the first in the browser's page, the second in a context of its own) on
    /// `url`; the first selects message 3, the second message 5; each remembers its session,
    /// sequence and connection count in `window.before`.
    static func openTwoTabs(_ browser: inout DevToolsSession, at url: String) async throws -> [Tab] {
        var tabs: [Tab] = []
        for selected in [3, 5] {
            let page = tabs.isEmpty ? try #require(browser.sessionID) : try await browser.openIsolatedPage()
            browser.sessionID = page
            try await browser.navigate(url)
            try await browser.waitUntil(sessionLive)
            try await browser.evaluate("document.querySelector('button[data-id=\"\(selected)\"]').click(); true")
            try await browser.waitUntil(Self.selected(selected))
            try await browser.evaluate(
                "window.before = { session: workflowClient.sessionID, sequence: workflowClient.sequence, connections: workflowClient.connections,"
                    + " whole: workflowClient.received.whole, delta: workflowClient.received.delta }; true")
            tabs.append((page, selected))
        }
        return tabs
    }

    /// Waits until every tab of `tabs` says it is reconnecting.
    static func expectReconnecting(_ browser: inout DevToolsSession, _ tabs: [Tab]) async throws {
        for tab in tabs {
            browser.sessionID = tab.page
            try await browser.waitUntil("workflowClient.state === 'reconnecting' && document.getElementById('connection').textContent === 'reconnecting…'")
        }
    }

    /// Waits until every tab of `tabs` is live again on a new connection, by itself, in the same
    /// session with its own selection and a sequence that did not go back, resumed with a delta
    /// (the frame it had is kept with its session's checkpoint, no whole frame); then a click in
    /// the first moves only the first.
    static func expectResumed(_ browser: inout DevToolsSession, _ tabs: [Tab]) async throws {
        for tab in tabs {
            browser.sessionID = tab.page
            try await browser.waitUntil("\(sessionLive) && workflowClient.connections > window.before.connections && \(selected(tab.selected))")
            #expect(try await browser.evaluate("workflowClient.sessionID === window.before.session") as? Bool == true, "the same session")
            #expect(try await browser.evaluate("workflowClient.sequence >= window.before.sequence") as? Bool == true, "the sequence never goes back")
            #expect(
                try await browser.evaluate("workflowClient.received.whole === window.before.whole && workflowClient.received.delta > window.before.delta")
                    as? Bool == true, "resumed with a delta, no whole frame")
        }
        browser.sessionID = tabs[0].page
        try await browser.evaluate("document.querySelector('button[data-id=\"4\"]').click(); true")
        try await browser.waitUntil(selected(4))
        browser.sessionID = tabs[1].page
        #expect(try await browser.evaluate(selected(tabs[1].selected)) as? Bool == true, "the other tab keeps its selection")
    }

    @Test(
        "two tabs' sessions through a coordinator SIGKILL (SQLite store): both pages say reconnecting, then each is live again by itself with its own selection and session; clicks in one never move the other; each resumes with a delta, no whole frame",
        .enabled(if: Chromium.path != nil, "chromium is not installed here (scripts/test.sh installs it with apt-get)"))
    func sessionsSurviveCoordinatorKill() async throws {
        try await BrowserCluster.with("browser-session-kill") { cluster in
            let store = ["--store-kind", "sqlite", "--store-path", cluster.directory.appendingPathComponent("coordinator.sqlite").path]
            let coordinator = try await cluster.startCoordinator(store)
            let baseURL = try await BrowserCluster.gatewayURL(of: coordinator)
            let port = try #require(URL(string: baseURL)?.port)
            try await cluster.startWorker("worker-1")
            try await cluster.startWorker("worker-2")
            let browserEndpoint = try await Chromium.start(in: cluster)
            // One DevTools connection throughout: the second tab's page belongs to it.
            try await withSafetyTimeout("two tabs' sessions through a coordinator SIGKILL") {
                try await Chromium.drive(browserEndpoint) { browser in
                    let tabs = try await Self.openTwoTabs(&browser, at: baseURL + "/")
                    // SIGKILL: nothing is given up in order; both pages notice and wait.
                    coordinator.forceKill()
                    _ = try await coordinator.waitForExit()
                    try await Self.expectReconnecting(&browser, tabs)
                    // Back on the same port: each page is live again by itself, in its own session.
                    let restarted = try await cluster.startCoordinator(store + ["--gateway-listen", "127.0.0.1:\(port)"])
                    try await Self.expectResumed(&browser, tabs)
                    #expect(try await restarted.terminate() == 0)
                }
            }
        }
    }

    @Test(
        "two tabs' sessions through a standby's takeover (PostgreSQL store, haproxy in front): the leader is SIGKILLed, both pages reconnect by themselves to the new leader with their own sessions and selections, each resuming with a delta, no whole frame",
        .enabled(if: Chromium.path != nil, "chromium is not installed here (scripts/test.sh installs it with apt-get)"),
        .enabled(if: LoadBalancer.path != nil, "haproxy is not installed here (scripts/test.sh installs it with apt-get)"),
        .enabled(if: PrivatePostgres.unavailableReason == nil, "\(PrivatePostgres.unavailableReason ?? "")"))
    func sessionsSurviveTakeover() async throws {
        try await PrivatePostgres.with { server in
            try await BrowserCluster.with("browser-takeover", sharedStore: server.url) { cluster in
                let gatewayPorts = [try LoopbackPort.unused(), try LoopbackPort.unused()]
                let leader = try await cluster.startCoordinator(0, gatewayPort: gatewayPorts[0], role: "leader")
                try await cluster.startCoordinator(1, gatewayPort: gatewayPorts[1], role: "standby")
                try await cluster.startWorker("worker-1")
                try await cluster.startWorker("worker-2")
                let balancerURL = try await LoadBalancer.start(in: cluster, gatewayPorts: gatewayPorts)
                let browserEndpoint = try await Chromium.start(in: cluster)
                try await withSafetyTimeout("two tabs' sessions through a takeover") {
                    try await Chromium.drive(browserEndpoint) { browser in
                        let tabs = try await Self.openTwoTabs(&browser, at: balancerURL + "/")
                        leader.forceKill()
                        _ = try await leader.waitForExit()
                        try await Self.expectReconnecting(&browser, tabs)
                        try await Self.expectResumed(&browser, tabs)
                    }
                }
                let newLeader = try #require(cluster.daemon(labelled: "coordinator-1"))
                #expect(newLeader.stderr.lines.contains { $0.contains("acquired the lease: leading") }, "the standby led")
            }
        }
    }

    @Test(
        "two people's tabs browse in sessions of their own: a click in one does not move the other; a reload resumes the session with its selection",
        .enabled(if: Chromium.path != nil, "chromium is not installed here (scripts/test.sh installs it with apt-get)"))
    func sessionPerTab() async throws {
        try await BrowserCluster.with("browser-sessions") { cluster in
            let coordinator = try await cluster.startCoordinator()
            let baseURL = try await BrowserCluster.gatewayURL(of: coordinator)
            try await cluster.startWorker("worker-1")
            try await cluster.startWorker("worker-2")
            let browserEndpoint = try await Chromium.start(in: cluster)
            let live = "workflowClient.state === 'live' && workflowClient.sessionID && document.querySelector('button[data-id=\"5\"]')"
                + " && document.getElementById('message-by').textContent === 'rendered by worker-2'"
            try await withSafetyTimeout("two tabs in two sessions") {
                try await Chromium.drive(browserEndpoint) { browser in
                    let first = browser.sessionID
                    let second = try await browser.openIsolatedPage()

                    try await browser.navigate(baseURL + "/")
                    try await browser.waitUntil(live)
                    try await browser.evaluate("document.querySelector('button[data-id=\"3\"]').click(); true")
                    try await browser.waitUntil(Self.selected(3))
                    let firstSession = try #require(try await browser.evaluate("workflowClient.sessionID") as? String)

                    browser.sessionID = second
                    try await browser.navigate(baseURL + "/")
                    try await browser.waitUntil(live)
                    let secondSession = try #require(try await browser.evaluate("workflowClient.sessionID") as? String)
                    #expect(firstSession != secondSession && firstSession.count == 32)
                    #expect(try await browser.evaluate("document.getElementById('message-body').dataset.messageId ?? null") is NSNull,
                        "the second tab starts with nothing selected")
                    try await browser.evaluate("document.querySelector('button[data-id=\"5\"]').click(); true")
                    try await browser.waitUntil(Self.selected(5))
                    try Self.save(try await browser.screenshot(), "email-browser-session-b.png", fixture: cluster)

                    browser.sessionID = first
                    try Self.save(try await browser.screenshot(), "email-browser-session-a.png", fixture: cluster)
                    #expect(try await browser.evaluate(Self.selected(3)) as? Bool == true, "the first tab still shows its own selection")
                    try await browser.reload(until: "\(live) && \(Self.selected(3))")
                    #expect(try await browser.evaluate("workflowClient.sessionID") as? String == firstSession, "the reload resumed the session")
                }
            }
            #expect(try await coordinator.terminate() == 0)
        }
    }
}
