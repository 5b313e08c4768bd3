import Foundation
import HummingbirdWSClient
import Logging
import NIOCore

#if canImport(FoundationNetworking)
import FoundationNetworking
import WorkflowClusterTesting
#endif

/// A test's HTTP and WebSocket client of a coordinator's gateway (real sockets, a real server).
package struct GatewayClient: Sendable {
    /// `http://127.0.0.1:PORT`.
    package let baseURL: String

    package init(baseURL: String) {
        self.baseURL = baseURL
    }

    /// One answer: status and body.
    package struct Answer: Sendable {
        package var status: Int
        package var body: Data
        /// The `Retry-After` header, if the answer had one.
        package var retryAfter: String? = nil
        package var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// The gateway URL a coordinator printed (`{"event":"gateway","url":…}` in JSON mode);
    /// with `role`, the first gateway it printed in that role (`leader`, or `standby`: a
    /// coordinator with a lease prints one of each when it takes over).
    package static func of(_ coordinator: DaemonProcess, role: String? = nil) async throws -> GatewayClient {
        struct Line: Decodable {
            var event: String
            var url: String?
        }
        let line = try await coordinator.stdout.first("the gateway to listen\(role.map { " as \($0)" } ?? "")") {
            line in line.contains(#""event":"gateway""#) && (role.map { line.contains(#""role":"\#($0)""#) } ?? true)
        }
        guard let url = try JSONDecoder().decode(Line.self, from: Data(line.utf8)).url else {
            throw WaitFailure(description: "no url in \(line)")
        }
        return GatewayClient(baseURL: url)
    }

    package func get(_ path: String) async throws -> Answer {
        try await send(URLRequest(url: URL(string: baseURL + path)!))
    }

    package func post(_ path: String, json: String) async throws -> Answer {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.httpMethod = "POST"
        request.httpBody = Data(json.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        return try await send(request)
    }

    private func send(_ request: URLRequest) async throws -> Answer {
        var request = request
        request.timeoutInterval = 60
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        return Answer(status: http?.statusCode ?? 0, body: data, retryAfter: http?.value(forHTTPHeaderField: "Retry-After"))
    }

    /// Reads the rendering stream at `path` (the shared root's, or a session's
    /// `/api/sessions/ID/renderings`), calling `body` with each message's text until it returns
    /// `true`.
    package func stream(_ path: String = "/api/renderings", _ body: @escaping @Sendable (String) async throws -> Bool) async throws {
        var logger = Logger(label: "test.gateway.client")
        logger.logLevel = .critical
        let url = baseURL.replacingOccurrences(of: "http://", with: "ws://") + path
        _ = try await WebSocketClient.connect(url: url, logger: logger) { inbound, outbound, _ in
            for try await message in inbound.messages(maxSize: 1 << 22) {
                guard case .text(let text) = message else { continue }
                if try await body(text) {
                    try await outbound.close(.normalClosure, reason: nil)
                    return
                }
            }
        }
    }
}

/// The test root's rendering as the gateway serves it (sinks as token strings).
package struct ListDetailRendering: Decodable, Sendable {
    package struct List: Decodable, Sendable {
        package var ids: [Int]
        package var onPick: String?
        package var renderedBy: String
    }
    package var list: List
    package var detail: ListDetailFrame.Detail
}

/// A rendering message of the stream: `{"rendering": …, "root": …, "sequence": N}`.
package struct StreamedRendering<T: Decodable & Sendable>: Decodable, Sendable {
    package var rendering: T
    package var root: String
    package var sequence: UInt64
}
