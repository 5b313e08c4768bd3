import Foundation

/// Where a daemon exports its spans (`tracing.*`, docs/OPERATIONS.md "Tracing"): off unless
/// `tracing.otlp_endpoint` is set, and then over OTLP/HTTP to that collector.
package struct TracingSettings: Sendable, Equatable {
    /// How spans are encoded for the collector (OTLP/HTTP's two encodings).
    package enum OTLPProtocol: String, Sendable, CaseIterable {
        case protobuf = "http/protobuf"
        case json = "http/json"
    }

    /// The collector's OTLP/HTTP URL (`http://HOST:4318`, or its full `/v1/traces` URL);
    /// `nil`: tracing is off.
    package var otlpEndpoint: String?
    /// The encoding the collector is sent.
    package var otlpProtocol: OTLPProtocol = .protobuf

    package init(otlpEndpoint: String? = nil, otlpProtocol: OTLPProtocol = .protobuf) {
        self.otlpEndpoint = otlpEndpoint
        self.otlpProtocol = otlpProtocol
    }

    /// The URL spans are posted to: the endpoint as given when it has a path, else with the
    /// OTLP/HTTP traces path (`/v1/traces`) appended, as `OTEL_EXPORTER_OTLP_ENDPOINT` means it.
    /// `nil` when tracing is off.
    package var tracesURL: String? {
        guard let endpoint = otlpEndpoint, let url = URLComponents(string: endpoint) else { return nil }
        if url.path.isEmpty || url.path == "/" { return (endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint) + "/v1/traces" }
        return endpoint
    }

    /// Whether `text` is a URL spans can be posted to: http or https, a host, no user, query
    /// nor fragment.
    package static func isValidEndpoint(_ text: String) -> Bool {
        guard let url = URLComponents(string: text), url.scheme == "http" || url.scheme == "https", let host = url.host, !host.isEmpty,
            url.user == nil, url.query == nil, url.fragment == nil, !text.contains(where: \.isWhitespace)
        else { return false }
        return true
    }
}
