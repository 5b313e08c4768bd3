import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import RemoteTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A test's HTTP and WebSocket client of a coordinator's gateway (real sockets, a real server).
struct GatewayClient: Sendable {
    /// `http://127.0.0.1:PORT`.
    let baseURL: String

    /// One answer: status and body.
    struct Answer: Sendable {
        var status: Int
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// The gateway URL a coordinator printed (`{"event":"gateway","url":…}` in JSON mode).
    static func of(_ coordinator: DaemonProcess) async throws -> GatewayClient {
        struct Line: Decodable {
            var event: String
            var url: String?
        }
        let line = try await coordinator.stdout.first("the gateway to listen") { $0.contains(#""event":"gateway""#) }
        guard let url = try JSONDecoder().decode(Line.self, from: Data(line.utf8)).url else {
            throw WaitFailure(description: "no url in \(line)")
        }
        return GatewayClient(baseURL: url)
    }

    func get(_ path: String) async throws -> Answer {
        try await send(URLRequest(url: URL(string: baseURL + path)!))
    }

    func post(_ path: String, json: String) async throws -> Answer {
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
        return Answer(status: (response as? HTTPURLResponse)?.statusCode ?? 0, body: data)
    }

    /// Reads the rendering stream, calling `body` with each message's text until it returns
    /// `true`.
    func stream(_ body: @escaping @Sendable (String) async throws -> Bool) async throws {
        var logger = Logger(label: "test.gateway.client")
        logger.logLevel = .critical
        let url = baseURL.replacingOccurrences(of: "http://", with: "ws://") + "/api/renderings"
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

/// The email browser's rendering as the gateway serves it.
struct BrowserRendering: Decodable, Sendable {
    struct Inbox: Decodable, Sendable {
        struct Row: Decodable, Sendable {
            var id: Int
            var subject: String
        }
        var messages: [Row]
        var onMessageSelected: String?
        var renderedBy: String
    }
    struct Message: Decodable, Sendable {
        var messageID: Int?
        var subject: String
        var renderedBy: String
    }
    var inbox: Inbox
    var message: Message
}

/// A rendering message of the stream: `{"rendering": …, "root": …, "sequence": N}`.
struct StreamedRendering<T: Decodable & Sendable>: Decodable, Sendable {
    var rendering: T
    var root: String
    var sequence: UInt64
}
