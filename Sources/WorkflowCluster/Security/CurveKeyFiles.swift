import Foundation
import WorkflowRemote
import ZeroMQ

/// Reads and writes the CURVE key files a cluster's `security` section names, and turns them
/// into the runtime's security settings.
///
/// Every failure is a `ClusterConfigurationError` naming the file and what was expected, thrown
/// at start. Errors and logs never contain a secret key's text: a malformed secret is reported
/// by its length only.
package enum CurveKeyFiles {
    /// The file names `keygen` writes inside its directory (and the paths a config then names).
    package enum Layout {
        /// The coordinator's secret key.
        package static let coordinatorSecret = "coordinator.key"
        /// The coordinator's public key.
        package static let coordinatorPublic = "coordinator.pub"
        /// The allow-list of worker public keys.
        package static let allowList = "allowed-workers"
        /// The directory of worker key files (`<name>.key`, `<name>.pub`).
        package static let workers = "workers"
    }

    /// The coordinator's runtime security: plaintext, or CURVE with its key pair and the
    /// allow-list.
    package static func serverSecurity(_ configuration: ClusterConfiguration) throws -> ServerSecurity {
        guard configuration.securityMode == .curve else { return .plaintext }
        let settings = configuration.security
        let secretPath = try requirePath(settings.serverSecretKeyPath, ClusterSetting.serverSecretKey.key, "the coordinator's secret key file")
        let allowPath = try requirePath(settings.allowedClientKeysPath, ClusterSetting.allowedClientKeys.key, "the allow-list file of worker public keys")
        let keyPair = try keyPair(secretFile: secretPath)
        return .curve(keyPair: keyPair, allowedClientKeys: try allowList(file: allowPath))
    }

    /// Worker `name`'s runtime security: plaintext, or CURVE with its key pair and the
    /// coordinator's public key.
    package static func clientSecurity(_ configuration: ClusterConfiguration, worker name: String) throws -> ClientSecurity {
        guard configuration.securityMode == .curve else { return .plaintext }
        let settings = configuration.security
        let publicPath = try requirePath(settings.serverPublicKeyPath, ClusterSetting.serverPublicKey.key, "the coordinator's public key file")
        let secretPath = try requirePath(
            settings.clientSecretKeyPath(forWorker: name), ClusterSetting.clientKeysDirectory.key,
            "a directory holding \(name).key (or security.client_secret_key)")
        return .curve(keyPair: try keyPair(secretFile: secretPath), serverKey: try publicKey(file: publicPath))
    }

    /// Loads a secret key file and derives its key pair. Refuses a file readable or writable by
    /// group or others (a leaked secret lets anyone impersonate its owner).
    package static func keyPair(secretFile path: String) throws -> CurveKeyPair {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ClusterConfigurationError(
                file: path, key: "", expected: "a secret key file (Z85 text, mode 0600)",
                found: errno == ENOENT ? missingKeyHint : String(cString: strerror(errno)))
        }
        let permissions = info.st_mode & 0o777
        guard permissions & 0o077 == 0 else {
            throw ClusterConfigurationError(
                file: path, key: "", expected: "a secret key file readable by its owner only (mode 0600 or 0400; chmod 600 it)",
                found: "mode " + String(permissions, radix: 8).leftPadded(to: 4))
        }
        let text = try keyText(path, what: "a secret key file")
        let secret: CurveKey
        do {
            secret = try CurveKey(z85: text)
        } catch {
            // The text may be a secret: report its shape only.
            throw ClusterConfigurationError(
                file: path, key: "", expected: "one 40-character Z85 CURVE secret key", found: "\(text.count) characters that are not a key")
        }
        do {
            return try CurveKeyPair(secretKey: secret)
        } catch {
            throw ClusterConfigurationError(file: path, key: "", expected: "a usable CURVE secret key", found: "\(error)")
        }
    }

    /// Loads a public key file.
    package static func publicKey(file path: String) throws -> CurveKey {
        let text = try keyText(path, what: "a public key file")
        do {
            return try CurveKey(z85: text)
        } catch {
            throw ClusterConfigurationError(file: path, key: "", expected: "one 40-character Z85 CURVE public key", found: "\"\(text.prefix(60))\"")
        }
    }

    /// Loads an allow-list: one Z85 public key per line (optionally followed by a `# comment`);
    /// blank lines and `#` comment lines ignored.
    package static func allowList(file path: String) throws -> Set<CurveKey> {
        let keys = try allowListIfAny(file: path)
        guard !keys.isEmpty else {
            throw ClusterConfigurationError(file: path, key: "", expected: "at least one worker public key", found: "none")
        }
        return keys
    }

    /// The keys an allow-list file holds, possibly none.
    private static func allowListIfAny(file path: String) throws -> Set<CurveKey> {
        let text = try keyText(path, what: "an allow-list file (one Z85 public key per line)")
        var keys: Set<CurveKey> = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            // '#' is also a Z85 character, so a comment is recognised by not being a key: the
            // line's first word is a key if it parses as one, else a line starting '#' is a
            // comment. Anything after the key (e.g. "  # worker-1") is ignored.
            guard let word = rawLine.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).first.map(String.init) else {
                continue
            }
            if let key = try? CurveKey(z85: word) {
                keys.insert(key)
            } else if !word.hasPrefix("#") {
                throw ClusterConfigurationError(
                    file: path, key: "line \(index + 1)", expected: "a 40-character Z85 CURVE public key or a # comment",
                    found: "\"\(word.prefix(60))\"")
            }
        }
        return keys
    }

    /// What `generate` wrote and what it found already in place.
    package struct GeneratedKeys: Sendable {
        /// The coordinator's public key.
        package var coordinatorPublicKey: CurveKey
        /// Each worker's public key, in the order asked.
        package var workerPublicKeys: [(name: String, key: CurveKey)]
        /// Every file written (or, for the allow-list, extended), in order.
        package var files: [String]
        /// Every key file that already existed and was used as it is.
        package var kept: [String]
    }

    /// Makes sure `directory` holds a coordinator key pair, one pair per worker and an
    /// allow-list admitting those workers (see `Layout`), creating only what is missing.
    ///
    /// Existing keys are loaded and kept, never replaced: rerunning keygen, or running it for a
    /// newly added worker, must not lock out the machines that already hold their secrets. An
    /// existing allow-list gains the public keys of the named workers it lacks. Secret files
    /// are created with mode 0600 (never widened and narrowed afterwards). A public file
    /// without its secret is an error, since writing a new pair would overwrite it.
    package static func generate(in directory: String, workers: [String]) throws -> GeneratedKeys {
        let fileManager = FileManager.default
        let workersDirectory = directory + "/" + Layout.workers
        try fileManager.createDirectory(atPath: workersDirectory, withIntermediateDirectories: true)
        var files: [String] = []
        var kept: [String] = []
        func write(_ path: String, _ text: String, mode: mode_t, append: Bool = false) throws {
            let flags = append ? O_WRONLY | O_APPEND : O_WRONLY | O_CREAT | O_EXCL
            let descriptor = open(path, flags | O_CLOEXEC, mode)
            guard descriptor >= 0 else {
                throw ClusterConfigurationError(
                    file: path, key: "", expected: "a new file (keygen never overwrites keys)", found: String(cString: strerror(errno)))
            }
            defer { close(descriptor) }
            let bytes = Array((text + "\n").utf8)
            let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            guard written == bytes.count, fsync(descriptor) == 0 else {
                throw ClusterConfigurationError(file: path, key: "", expected: "a writable file", found: String(cString: strerror(errno)))
            }
            files.append(path)
        }
        /// The pair whose secret is at `secretPath`: loaded when it exists, else created.
        func pair(secretPath: String, publicPath: String) throws -> CurveKeyPair {
            guard fileManager.fileExists(atPath: secretPath) else {
                guard !fileManager.fileExists(atPath: publicPath) else {
                    throw ClusterConfigurationError(
                        file: publicPath, key: "", expected: "no public key file without its secret (\(secretPath))",
                        found: "a public key file; remove it, or restore its secret")
                }
                let pair = try CurveKeyPair.generate()
                try write(secretPath, pair.secretKey.z85, mode: 0o600)
                try write(publicPath, pair.publicKey.z85, mode: 0o644)
                return pair
            }
            let pair = try keyPair(secretFile: secretPath)
            kept.append(secretPath)
            if fileManager.fileExists(atPath: publicPath) {
                guard try publicKey(file: publicPath) == pair.publicKey else {
                    throw ClusterConfigurationError(
                        file: publicPath, key: "", expected: "the public key of \(secretPath)", found: "another key")
                }
                kept.append(publicPath)
            } else {
                try write(publicPath, pair.publicKey.z85, mode: 0o644)
            }
            return pair
        }
        let coordinator = try pair(
            secretPath: directory + "/" + Layout.coordinatorSecret, publicPath: directory + "/" + Layout.coordinatorPublic)
        var workerKeys: [(name: String, key: CurveKey)] = []
        for name in workers {
            let workerPair = try pair(secretPath: workersDirectory + "/\(name).key", publicPath: workersDirectory + "/\(name).pub")
            workerKeys.append((name, workerPair.publicKey))
        }
        let allowListPath = directory + "/" + Layout.allowList
        if fileManager.fileExists(atPath: allowListPath) {
            let listed = try allowListIfAny(file: allowListPath)
            let missing = workerKeys.filter { !listed.contains($0.key) }
            if missing.isEmpty {
                kept.append(allowListPath)
            } else {
                try write(allowListPath, missing.map { "\($0.key.z85)  # \($0.name)" }.joined(separator: "\n"), mode: 0o644, append: true)
            }
        } else {
            let lines = ["# Worker public keys the coordinator admits (one Z85 key per line)."]
                + workerKeys.map { "\($0.key.z85)  # \($0.name)" }
            try write(allowListPath, lines.joined(separator: "\n"), mode: 0o644)
        }
        return GeneratedKeys(coordinatorPublicKey: coordinator.publicKey, workerPublicKeys: workerKeys, files: files, kept: kept)
    }

    // MARK: - Helpers

    /// What a missing key file is reported as: with the command that creates it.
    private static let missingKeyHint = "no such file (`workflow-coordinator keygen --config <file>` creates the cluster's keys)"

    private static func requirePath(_ path: String?, _ key: String, _ what: String) throws -> String {
        guard let path, !path.isEmpty else {
            throw ClusterConfigurationError(file: "configuration", key: key, expected: "\(what) (required with security.mode \"curve\")", found: "nothing")
        }
        return path
    }

    private static func keyText(_ path: String, what: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "an unreadable file" : missingKeyHint
            throw ClusterConfigurationError(file: path, key: "", expected: what, found: reason)
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
