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
}
