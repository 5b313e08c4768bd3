import Foundation
import PostgresNIO

/// How the connection to the PostgreSQL store is secured: the URL's `sslmode` and `sslrootcert`
/// parameters, with libpq's names and meanings.
///
/// The fencing tokens, every session's state and every accepted event travel on this connection,
/// and managed PostgreSQL services require TLS. Only the modes that say exactly what they do are
/// accepted: libpq's `allow` and `prefer` fall back to clear text without a word when the server
/// offers no TLS, and a configuration that silently weakens a guarantee is refused at start
/// instead. Without `sslmode` the connection is in clear (`disable`), as before TLS was
/// supported; the coordinator's first lines say which mode is in force (`ClusterGuarantees`).
package struct PostgresTransportSecurity: Sendable, Equatable {
    /// libpq's `sslmode`, the values this store accepts.
    package enum Mode: String, CaseIterable, Sendable {
        /// No TLS: the connection is in clear (a unix socket or a trusted network). The default.
        case disable
        /// TLS, without checking the server's certificate: encrypted, but a server in the middle
        /// that offers any certificate is not detected. A server without TLS is refused.
        case require
        /// TLS, and the server's certificate must be signed by a trusted CA (`sslrootcert`, else
        /// the system's roots); its host name is not checked.
        case verifyCA = "verify-ca"
        /// TLS, the server's certificate signed by a trusted CA and naming the host the URL
        /// connects to (a DNS name, or an IP address in the certificate's IP addresses).
        case verifyFull = "verify-full"

        /// Whether the server's certificate is checked against a CA.
        var verifies: Bool { self == .verifyCA || self == .verifyFull }
    }

    /// The mode.
    package var mode: Mode
    /// Whether the URL named the mode (`false`: `disable` by default).
    package var isExplicit: Bool
    /// The CA certificates (PEM) the server's certificate must be signed by (`sslrootcert`;
    /// `nil`: the system's trust roots), for the verifying modes only.
    package var rootCertificateFile: String?

    /// The security the URL's query `parameters` name; `overUnixSocket`: the URL names a
    /// socket directory (`host=/…`), where PostgreSQL offers no TLS. The reason in words when
    /// they are contradictory or unknown: a value libpq has but this store refuses (`allow`,
    /// `prefer`), `sslrootcert` without a mode that verifies, a TLS mode over a unix socket.
    static func parse(_ parameters: [String: String], overUnixSocket: Bool) -> Result<PostgresTransportSecurity, Refusal> {
        let known = Mode.allCases.map(\.rawValue).joined(separator: ", ")
        var mode = Mode.disable
        if let text = parameters["sslmode"] {
            guard let named = Mode(rawValue: text) else {
                if text == "allow" || text == "prefer" {
                    return .failure(
                        Refusal(
                            "sslmode '\(text)' is not supported: it falls back to a connection in clear without a word when the server offers no TLS; choose disable or require (known: \(known))"
                        ))
                }
                return .failure(Refusal("unknown sslmode '\(text)' (known: \(known))"))
            }
            mode = named
        }
        let rootCertificate = parameters["sslrootcert"]
        if let rootCertificate {
            guard mode.verifies else {
                return .failure(
                    Refusal(
                        "sslrootcert is only used to verify the server's certificate, which sslmode=\(mode.rawValue) does not: use sslmode=verify-full (or verify-ca), or remove sslrootcert"
                    ))
            }
            guard rootCertificate.hasPrefix("/") else {
                return .failure(Refusal("sslrootcert must be an absolute path to a PEM file of CA certificates (got '\(rootCertificate)')"))
            }
        }
        if overUnixSocket, mode != .disable {
            return .failure(
                Refusal(
                    "sslmode=\(mode.rawValue) over a unix socket (host=\(parameters["host"] ?? "")): PostgreSQL offers no TLS there; use sslmode=disable for a socket, or a TCP host for TLS"
                ))
        }
        return .success(PostgresTransportSecurity(mode: mode, isExplicit: parameters["sslmode"] != nil, rootCertificateFile: rootCertificate))
    }

    /// Why a URL's security parameters cannot be used, in words.
    struct Refusal: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// postgres-nio's TLS setting for this security: the CA file is read now, so a missing or
    /// unreadable one is a refusal in words at start, not a failed handshake later.
    func connectionTLS() -> Result<PostgresConnection.Configuration.TLS, Refusal> {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch mode {
        case .disable: return .success(.disable)
        case .require: configuration.certificateVerification = .none
        case .verifyCA: configuration.certificateVerification = .noHostnameVerification
        case .verifyFull: configuration.certificateVerification = .fullVerification
        }
        if let rootCertificateFile {
            guard FileManager.default.isReadableFile(atPath: rootCertificateFile) else {
                let why = FileManager.default.fileExists(atPath: rootCertificateFile) ? "it cannot be read" : "there is no such file"
                return .failure(Refusal("sslrootcert \(rootCertificateFile): \(why)"))
            }
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMFile(rootCertificateFile)
            } catch {
                return .failure(Refusal("sslrootcert \(rootCertificateFile) is not a PEM file of CA certificates (\(error))"))
            }
            guard !certificates.isEmpty else {
                return .failure(Refusal("sslrootcert \(rootCertificateFile) holds no PEM certificate"))
            }
            configuration.trustRoots = .certificates(certificates)
        }
        do {
            return .success(.require(try NIOSSLContext(configuration: configuration)))
        } catch {
            return .failure(Refusal("cannot prepare TLS for sslmode=\(mode.rawValue): \(error)"))
        }
    }

    /// The connection's security in the words of the coordinator's "store:" start line.
    package var guarantee: String {
        switch mode {
        case .disable:
            let why = isExplicit ? "sslmode=disable" : "sslmode=disable, the default"
            return "in clear (\(why)): not encrypted, use a unix socket or a trusted network"
        case .require:
            return "TLS (sslmode=require): encrypted, the server's certificate not verified"
        case .verifyCA:
            return "TLS (sslmode=verify-ca): encrypted, the server's certificate signed by \(authorities), its host name not checked"
        case .verifyFull:
            return "TLS (sslmode=verify-full): encrypted, the server's certificate signed by \(authorities) and naming its host"
        }
    }

    private var authorities: String { rootCertificateFile.map { "a CA of \($0)" } ?? "a CA the system trusts" }

    /// The security `url` names, for the start line (`nil`: the URL or its parameters are
    /// malformed, which opening the store reports in words).
    package static func of(url: String) -> PostgresTransportSecurity? {
        guard let components = URLComponents(string: url) else { return nil }
        var parameters: [String: String] = [:]
        for item in components.queryItems ?? [] { parameters[item.name] = item.value ?? "" }
        let overUnixSocket = parameters["host"].map { !$0.isEmpty } ?? false
        return try? parse(parameters, overUnixSocket: overUnixSocket).get()
    }
}
