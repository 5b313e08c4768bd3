import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import WorkflowClusterTesting


/// Headless Chromium driven over the DevTools protocol: a real browser loading the gateway's
/// pages, for the browser tests.
///
/// Started through the test's `BrowserCluster` (so it is stopped with the daemons); the test
/// talks to the page's DevTools WebSocket with hummingbird-websocket's client.
enum Chromium {
    /// Debian's `chromium` (`apt-get install -y chromium`; `scripts/test.sh` installs it).
    static let path: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Starts Chromium on a blank page and returns the browser's DevTools WebSocket URL.
    static func start(in fixture: BrowserCluster) async throws -> String {
        guard let path else { throw WaitFailure(description: "chromium is not installed") }
        let profile = fixture.directory.appendingPathComponent("chromium-profile").path
        let browser = try fixture.start(
            path,
            [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--hide-scrollbars", "--window-size=1100,640", "--remote-allow-origins=*", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
                "--user-data-dir=\(profile)", "about:blank",
            ],
            label: "chromium")
        let line = try await browser.stderr.first("chromium's DevTools endpoint") { $0.contains("DevTools listening on ws://") }
        guard let range = line.range(of: #"ws://\S+"#, options: .regularExpression) else {
            throw WaitFailure(description: "no DevTools endpoint in \(line)")
        }
        return String(line[range])
    }

    /// Connects to the browser's DevTools endpoint, attaches to its page and runs `script` with
    /// a session on that page.
    static func drive(_ pageEndpoint: String, _ script: @escaping @Sendable (inout DevToolsSession) async throws -> Void) async throws {
        var logger = Logger(label: "test.chromium")
        logger.logLevel = .critical
        var configuration = WebSocketClientConfiguration()
        configuration.maxFrameSize = 1 << 26
        _ = try await WebSocketClient.connect(url: pageEndpoint, configuration: configuration, logger: logger) { inbound, outbound, _ in
            var session = DevToolsSession(messages: inbound.messages(maxSize: 1 << 26).makeAsyncIterator(), outbound: outbound)
            let targets = try await session.call("Target.getTargets")["targetInfos"] as? [[String: Any]] ?? []
            guard let page = targets.first(where: { $0["type"] as? String == "page" })?["targetId"] as? String else {
                throw DevToolsSession.ProtocolError(description: "no page among \(targets)")
            }
            session.sessionID = try await session.call("Target.attachToTarget", ["targetId": page, "flatten": true])["sessionId"] as? String
            try await script(&session)
            try await outbound.close(.normalClosure, reason: nil)
        }
    }
}

/// Request/response over one DevTools WebSocket (events in between are skipped).
struct DevToolsSession {
    var messages: WebSocketInboundMessageStream.AsyncIterator
    let outbound: WebSocketOutboundWriter
    private var nextID = 0
    /// The attached page's session (commands without it go to the browser).
    var sessionID: String?

    init(messages: WebSocketInboundMessageStream.AsyncIterator, outbound: WebSocketOutboundWriter) {
        self.messages = messages
        self.outbound = outbound
    }

    struct ProtocolError: Error, CustomStringConvertible {
        var description: String
    }

    /// Calls `method` and returns its `result`.
    @discardableResult
    mutating func call(_ method: String, _ parameters: [String: Any] = [:]) async throws -> [String: Any] {
        nextID += 1
        var command: [String: Any] = ["id": nextID, "method": method, "params": parameters]
        if let sessionID { command["sessionId"] = sessionID }
        let request = try JSONSerialization.data(withJSONObject: command)
        try await outbound.write(.text(String(decoding: request, as: UTF8.self)))
        while let message = try await messages.next() {
            let data: Data
            switch message {
            case .text(let text): data = Data(text.utf8)
            case .binary(let buffer): data = Data(buffer.readableBytesView)
            }
            guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any], object["id"] as? Int == nextID else { continue }
            if let error = object["error"] { throw ProtocolError(description: "\(method): \(error)") }
            return object["result"] as? [String: Any] ?? [:]
        }
        throw ProtocolError(description: "the DevTools connection closed during \(method)")
    }

    /// Evaluates `expression` in the page (awaiting a promise) and returns its value.
    @discardableResult
    mutating func evaluate(_ expression: String) async throws -> Any? {
        let result = try await call("Runtime.evaluate", ["expression": expression, "awaitPromise": true, "returnByValue": true])
        if let exception = result["exceptionDetails"] { throw ProtocolError(description: "\(expression): \(exception)") }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// Resolves once `condition` (a JavaScript expression) is true in the page: the page checks
    /// it on every DOM change, so the test waits for an event, not for time.
    mutating func waitUntil(_ condition: String) async throws {
        try await evaluate(
            """
            new Promise(resolve => {
              const check = () => { try { return Boolean(\(condition)); } catch (e) { return false; } };
              if (check()) return resolve(true);
              const observer = new MutationObserver(() => { if (check()) { observer.disconnect(); resolve(true); } });
              observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
            })
            """)
    }

    /// Opens a page in a browser context of its own (its own cookies and storage, as a second
    /// person's browser would have) and returns its session id: set `sessionID` to it to drive
    /// that page.
    mutating func openIsolatedPage() async throws -> String {
        let page = sessionID
        sessionID = nil
        defer { sessionID = page }
        guard let context = try await call("Target.createBrowserContext")["browserContextId"] as? String,
            let target = try await call("Target.createTarget", ["url": "about:blank", "browserContextId": context])["targetId"] as? String,
            let session = try await call("Target.attachToTarget", ["targetId": target, "flatten": true])["sessionId"] as? String
        else { throw ProtocolError(description: "no isolated page could be opened") }
        return session
    }

    /// Reloads the page and resolves once the new document satisfies `condition`.
    mutating func reload(until condition: String) async throws {
        try await evaluate("window.beforeReload = true")
        try await call("Page.reload")
        while true {
            do {
                // Until the new document commits, an evaluation may land in the old one.
                if try await evaluate("window.beforeReload === undefined") as? Bool == true { break }
            } catch let error as ProtocolError where error.description.contains("context") {
                continue
            }
        }
        try await waitUntil(condition)
    }

    /// Loads `url` in the page and returns once its document is the one evaluated.
    mutating func navigate(_ url: String) async throws {
        try await call("Page.navigate", ["url": url])
        // Until the new document commits, an evaluation may land in the old one, or in one
        // being destroyed: ask again until the page answers from `url`.
        while true {
            do {
                if try await evaluate("location.href") as? String == url { return }
            } catch let error as ProtocolError where error.description.contains("context") {
                continue
            }
        }
    }

    /// A PNG of the page as it is shown now.
    mutating func screenshot() async throws -> Data {
        let result = try await call("Page.captureScreenshot", ["format": "png"])
        guard let base64 = result["data"] as? String, let png = Data(base64Encoded: base64) else {
            throw ProtocolError(description: "no screenshot data")
        }
        return png
    }
}
