import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore

/// Keep-alive HTTP/1.1 connections to one gateway, used in turn: the load's requests spread over
/// them, as many browsers' would.
struct GatewayConnections: Sendable {
    let host: String
    let port: Int
    private let clients: [TestClient]

    /// `count` connections to `url` (`http://HOST:PORT`).
    init(url: String, count: Int) throws {
        guard let parsed = URLComponents(string: url), let host = parsed.host, let port = parsed.port else {
            throw LoadFailure("not an http://HOST:PORT address: \(url)")
        }
        self.host = host
        self.port = port
        clients = (0..<count).map { _ in TestClient(host: host, port: port, configuration: .init(timeout: .seconds(60))) }
        for client in clients { client.connect() }
    }

    /// The WebSocket address of `path` on the same gateway.
    func webSocketURL(_ path: String) -> String { "ws://\(host):\(port)\(path)" }

    /// POSTs `body` (JSON) to `path` on connection `index` (modulo their number).
    func post(_ path: String, json body: String, on index: Int) async throws -> (status: Int, body: String) {
        let response = try await clients[index % clients.count].post(
            path, headers: [.contentType: "application/json"], body: ByteBuffer(string: body))
        return (response.status.code, response.body.map { String(buffer: $0) } ?? "")
    }

    /// GETs `path` on connection `index` (modulo their number); `location` is the answer's
    /// `Location` (a redirect's).
    func get(_ path: String, on index: Int) async throws -> (status: Int, body: String, location: String?) {
        let response = try await clients[index % clients.count].get(path)
        return (response.status.code, response.body.map { String(buffer: $0) } ?? "", response.head.headerFields[.location])
    }
}

/// Why the load could not run, in words.
struct LoadFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
