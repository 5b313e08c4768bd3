import Foundation
import WorkflowClusterTesting

/// A certificate authority of a test's own and a server certificate it signed, made with the
/// `openssl` command in a directory of the test's (which the test removes): what a TLS server
/// presents and what its clients trust, real files as an operator's would be.
package struct TestCertificates: Sendable {
    /// The CA's certificate (PEM): what a client names as `sslrootcert`.
    package let authority: URL
    /// The server's certificate, signed by the CA, and its key.
    package let server: PrivatePostgres.ServerCertificate

    /// Why `openssl` could not make them.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Makes a CA named `name` and a server certificate naming `hosts` (DNS names, or IP
    /// addresses) in `directory/name/`.
    package static func make(_ name: String, in directory: URL, hosts: [String]) async throws -> TestCertificates {
        let folder = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = { (file: String) in folder.appendingPathComponent(file).path }
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try await openssl(
            ["req", "-x509"] + key + [
                "-keyout", path("ca.key"), "-out", path("ca.crt"), "-days", "2", "-subj", "/CN=\(name) test CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ])
        try await openssl(["req", "-new"] + key + ["-keyout", path("server.key"), "-out", path("server.csr"), "-subj", "/CN=\(hosts.first ?? "server")"])
        let names = hosts.map { $0.contains(where: \.isLetter) ? "DNS:\($0)" : "IP:\($0)" }.joined(separator: ",")
        let extensions = """
            subjectAltName=\(names)
            basicConstraints=critical,CA:FALSE
            keyUsage=critical,digitalSignature,keyEncipherment
            extendedKeyUsage=serverAuth

            """
        try Data(extensions.utf8).write(to: URL(fileURLWithPath: path("server.ext")))
        try await openssl([
            "x509", "-req", "-in", path("server.csr"), "-CA", path("ca.crt"), "-CAkey", path("ca.key"), "-CAcreateserial",
            "-out", path("server.crt"), "-days", "2", "-extfile", path("server.ext"),
        ])
        return TestCertificates(
            authority: URL(fileURLWithPath: path("ca.crt")),
            server: PrivatePostgres.ServerCertificate(certificate: URL(fileURLWithPath: path("server.crt")), key: URL(fileURLWithPath: path("server.key"))))
    }

    /// Runs `openssl` with `arguments` to its end; throws with its output when it fails.
    private static func openssl(_ arguments: [String]) async throws {
        let process = try DaemonProcess("/usr/bin/openssl", arguments, label: "openssl \(arguments.first ?? "")")
        guard try await process.waitForExit() == 0 else {
            throw Failure(description: "openssl \(arguments.joined(separator: " ")) failed: \((process.stdout.lines + process.stderr.lines).joined(separator: "\n"))")
        }
    }
}
