import Foundation
import Hummingbird
import HummingbirdTesting
import RemoteTestSupport
import Testing
import WorkflowCluster
import WorkflowClusterTesting
@testable import WorkflowGateway

/// `gateway.allowed_origins`: the pages of other origins (another coordinator's, following their
/// session here) that may call the gateway, in the configuration and in CORS answers.
@Suite("Gateway cross-origin pages")
struct CrossOriginTests {
    static let page = "http://page.test:8080"
    static let token = "cross-origin-token-0123456789"

    @Test("allowed origins in the file: normalised as a browser sends them; anything but http(s)://HOST[:PORT] is a configuration error naming the entry")
    func file() throws {
        #expect(try GatewayConfigurationTests.parse("{}").gateway.allowedOrigins.isEmpty)
        let parsed = try GatewayConfigurationTests.parse(
            #"{"allowed_origins": ["http://Page.Test:8080", "https://app.example:443/", "http://127.0.0.1", "http://[::1]:9000"]}"#)
        #expect(parsed.gateway.allowedOrigins.map(\.description) == ["http://page.test:8080", "https://app.example", "http://127.0.0.1", "http://[::1]:9000"])
        for bad in [#""*""#, #""page.test:8080""#, #""http://page.test/app""#, #""ftp://page.test""#, #""http://u@page.test""#,
                    #""http://page.test?x=1""#, #""http://page.test#top""#, #""""#, "8080", "null"]
        {
            let error = GatewayConfigurationTests.error { _ = try GatewayConfigurationTests.parse(#"{"allowed_origins": [\#(bad)]}"#) }
            #expect(error?.key == "gateway.allowed_origins[0]", "\(bad): \(String(describing: error))")
        }
        let second = GatewayConfigurationTests.error { _ = try GatewayConfigurationTests.parse(#"{"allowed_origins": ["http://a.test", "a.test"]}"#) }
        #expect(second?.key == "gateway.allowed_origins[1]" && second?.description.contains("http(s)://HOST[:PORT]") == true, "\(String(describing: second))")
        let notAList = GatewayConfigurationTests.error { _ = try GatewayConfigurationTests.parse(#"{"allowed_origins": "http://a.test"}"#) }
        #expect(notAList?.key == "gateway.allowed_origins", "\(String(describing: notAList))")
    }

    @Test("the flag overrides WORKFLOW_GATEWAY_ALLOWED_ORIGINS (comma-separated), which replaces the file's list; a malformed one names the layer")
    func overrides() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wf-origins-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("cluster.json").path
        try Data(#"{"coordinator": {"endpoint": "ipc:///tmp/x"}, "gateway": {"listen": "127.0.0.1:0", "allowed_origins": ["http://file.test"]}}"#.utf8)
            .write(to: URL(fileURLWithPath: file))
        func origins(_ environment: [String: String], _ overrides: ClusterOverrides = ClusterOverrides()) async throws -> [String] {
            try await ClusterSettings.load(file: file, overrides: overrides, environment: environment).configuration.gateway.allowedOrigins.map(\.description)
        }
        #expect(try await origins([:]) == ["http://file.test"])
        let environment = ["WORKFLOW_GATEWAY_ALLOWED_ORIGINS": "http://a.test:1, https://b.test"]
        #expect(try await origins(environment) == ["http://a.test:1", "https://b.test"])
        var flag = ClusterOverrides()
        flag[.gatewayAllowedOrigins] = "http://c.test"
        #expect(try await origins(environment, flag) == ["http://c.test"])
        #expect(try await origins(["WORKFLOW_GATEWAY_ALLOWED_ORIGINS": ""]) == [], "empty: none")
        await #expect {
            _ = try await origins(["WORKFLOW_GATEWAY_ALLOWED_ORIGINS": "http://a.test,*"])
        } throws: { error in
            let error = error as? ClusterConfigurationError
            return error?.key == "gateway.allowed_origins" && error?.description.contains("command line/environment") == true
        }
    }

    @Test(
        "an allowed page's preflight is answered 204 without a token; its requests' answers (401 and errors included) name it; another origin's preflight is 403, its requests answered without CORS headers; none configured: no CORS at all"
    )
    func answers() async throws {
        let session = WorkflowRootSession(name: "tally", workflow: TallyWorkflow())
        var options = GatewayTesting.options(bearerToken: Self.token)
        options.allowedOrigins = [try #require(GatewayOrigin(parsing: Self.page))]
        let authorized: HTTPFields = [.authorization: "Bearer \(Self.token)", .origin: Self.page]
        try await GatewayTesting.application(session: session, options: options).test(.router) { client in
            for (path, method) in [("/api/events/some-token", "POST"), ("/api/sessions/0123456789abcdef0123456789abcdef", "DELETE"), ("/api/rendering", "GET")] {
                try await client.execute(
                    uri: path, method: .options,
                    headers: [.origin: Self.page, .accessControlRequestMethod: method, .accessControlRequestHeaders: "authorization, content-type"]
                ) { response in
                    #expect(response.status == .noContent, "\(path)")
                    #expect(response.headers[.accessControlAllowOrigin] == Self.page)
                    #expect(response.headers[.accessControlAllowMethods]?.contains(method) == true)
                    #expect(response.headers[.accessControlAllowHeaders] == "Authorization, Content-Type")
                    #expect(response.headers[.vary] == "Origin")
                }
            }
            try await client.execute(uri: "/api/rendering", method: .get, headers: authorized) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.accessControlAllowOrigin] == Self.page)
                #expect(response.headers[.accessControlExposeHeaders] == "Location, Retry-After")
                #expect(response.headers[values: .vary].contains("Origin"))
            }
            // Errors too, so that the page can read why.
            try await client.execute(uri: "/api/rendering", method: .get, headers: [.origin: Self.page]) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.accessControlAllowOrigin] == Self.page)
            }
            var posted = authorized
            posted[.contentType] = "application/json"
            try await client.execute(uri: "/api/events/no-such-token", method: .post, headers: posted, body: GatewayTesting.body("1")) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.accessControlAllowOrigin] == Self.page)
            }
            try await client.execute(uri: "/no/such/path", method: .get, headers: authorized) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.accessControlAllowOrigin] == Self.page)
            }
            // Another origin.
            let stranger = "http://elsewhere.test"
            try await client.execute(uri: "/api/events/some-token", method: .options, headers: [.origin: stranger, .accessControlRequestMethod: "POST"]) { response in
                #expect(response.status == .forbidden)
                let error = try GatewayTesting.decode(ErrorBody.self, response.body)
                #expect(error.error == "origin-not-allowed" && error.message.contains(stranger) && error.message.contains("gateway.allowed_origins"), "\(error)")
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
            try await client.execute(uri: "/api/rendering", method: .get, headers: [.authorization: "Bearer \(Self.token)", .origin: stranger]) { response in
                #expect(response.status == .ok, "served: only a browser keeps the answer from the page")
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
            // An OPTIONS that is no preflight: as before (the token checked, then the method).
            try await client.execute(uri: "/api/rendering", method: .options, headers: [.origin: Self.page]) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: "/api/rendering", method: .options, headers: authorized) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.accessControlAllowOrigin] == Self.page)
            }
        }
        // None configured: a preflight is an OPTIONS like any other, answers carry no CORS headers.
        try await GatewayTesting.application(session: session).test(.router) { client in
            try await client.execute(uri: "/api/events/some-token", method: .options, headers: [.origin: Self.page, .accessControlRequestMethod: "POST"]) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
            try await client.execute(uri: "/api/rendering", method: .get, headers: [.origin: Self.page]) { response in
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
        }
        await session.stop()
    }
}
