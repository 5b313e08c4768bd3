import Foundation
import WorkflowRemote
import ZeroMQ

/// Reads and writes the CURVE key files a cluster's `security` section names, and turns them
/// into the runtime's security settings.
///
/// Every failure is a `ClusterConfigurationError` naming the file and what was expected, thrown
/// at start. Errors and logs never contain a secret key's text: a malformed secret is reported
/// by its length only.
public enum CurveKeyFiles {
    /// The file names `keygen` writes inside its directory (and the paths a config then names).
    public enum Layout {
        /// The coordinator's secret key.
        public static let coordinatorSecret = "coordinator.key"
        /// The coordinator's public key.
        public static let coordinatorPublic = "coordinator.pub"
        /// The allow-list of worker public keys.
        public static let allowList = "allowed-workers"
        /// The directory of worker key files (`<name>.key`, `<name>.pub`).
        public static let workers = "workers"
    }

    /// The coordinator's runtime security: plaintext, or CURVE with its key pair and the
    /// allow-list.
    public static func serverSecurity(_ settings: SecuritySettings) throws -> ServerSecurity {
        guard settings.mode == .curve else { return .plaintext }
        let secretPath = try requirePath(settings.serverSecretKeyPath, "security.server_secret_key", "the coordinator's secret key file")
        let allowPath = try requirePath(settings.allowedClientKeysPath, "security.allowed_client_keys", "the allow-list file of worker public keys")
        let keyPair = try keyPair(secretFile: secretPath)
        return .curve(keyPair: keyPair, allowedClientKeys: try allowList(file: allowPath))
    }

    /// Worker `name`'s runtime security: plaintext, or CURVE with its key pair and the
    /// coordinator's public key.
    public static func clientSecurity(_ settings: SecuritySettings, worker name: String) throws -> ClientSecurity {
        guard settings.mode == .curve else { return .plaintext }
        let publicPath = try requirePath(settings.serverPublicKeyPath, "security.server_public_key", "the coordinator's public key file")
        let secretPath = try requirePath(
            settings.clientSecretKeyPath(forWorker: name), "security.client_keys_dir",
            "a directory holding \(name).key (or security.client_secret_key)")
        return .curve(keyPair: try keyPair(secretFile: secretPath), serverKey: try publicKey(file: publicPath))
    }

    /// Loads a secret key file and derives its key pair. Refuses a file readable or writable by
    /// group or others (a leaked secret lets anyone impersonate its owner).
    public static func keyPair(secretFile path: String) throws -> CurveKeyPair {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ClusterConfigurationError(
                file: path, key: "", expected: "a secret key file (Z85 text, mode 0600)",
                found: errno == ENOENT ? "no such file" : String(cString: strerror(errno)))
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
    public static func publicKey(file path: String) throws -> CurveKey {
        let text = try keyText(path, what: "a public key file")
        do {
            return try CurveKey(z85: text)
        } catch {
            throw ClusterConfigurationError(file: path, key: "", expected: "one 40-character Z85 CURVE public key", found: "\"\(text.prefix(60))\"")
        }
    }

    /// Loads an allow-list: one Z85 public key per line (optionally followed by a `# comment`);
    /// blank lines and `#` comment lines ignored.
    public static func allowList(file path: String) throws -> Set<CurveKey> {
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
        guard !keys.isEmpty else {
            throw ClusterConfigurationError(file: path, key: "", expected: "at least one worker public key", found: "none")
        }
        return keys
    }

    /// What `generate` wrote.
    public struct GeneratedKeys: Sendable {
        /// The coordinator's public key.
        public var coordinatorPublicKey: CurveKey
        /// Each worker's public key, in the order asked.
        public var workerPublicKeys: [(name: String, key: CurveKey)]
        /// Every file written, in order.
        public var files: [String]
    }

    /// Writes a fresh coordinator key pair, one pair per worker and the allow-list into
    /// `directory` (see `Layout`). Secret files are created with mode 0600 (never widened
    /// and narrowed afterwards); an existing key file is never overwritten.
    public static func generate(in directory: String, workers: [String]) throws -> GeneratedKeys {
        let fileManager = FileManager.default
        let workersDirectory = directory + "/" + Layout.workers
        try fileManager.createDirectory(atPath: workersDirectory, withIntermediateDirectories: true)
        var files: [String] = []
        func write(_ path: String, _ text: String, mode: mode_t) throws {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
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
        let coordinator = try CurveKeyPair.generate()
        try write(directory + "/" + Layout.coordinatorSecret, coordinator.secretKey.z85, mode: 0o600)
        try write(directory + "/" + Layout.coordinatorPublic, coordinator.publicKey.z85, mode: 0o644)
        var workerKeys: [(name: String, key: CurveKey)] = []
        for name in workers {
            let pair = try CurveKeyPair.generate()
            try write(workersDirectory + "/\(name).key", pair.secretKey.z85, mode: 0o600)
            try write(workersDirectory + "/\(name).pub", pair.publicKey.z85, mode: 0o644)
            workerKeys.append((name, pair.publicKey))
        }
        let allowList = ["# Worker public keys the coordinator admits (one Z85 key per line)."]
            + workerKeys.map { "\($0.key.z85)  # \($0.name)" }
        try write(directory + "/" + Layout.allowList, allowList.joined(separator: "\n"), mode: 0o644)
        return GeneratedKeys(coordinatorPublicKey: coordinator.publicKey, workerPublicKeys: workerKeys, files: files)
    }

    // MARK: - Helpers

    private static func requirePath(_ path: String?, _ key: String, _ what: String) throws -> String {
        guard let path, !path.isEmpty else {
            throw ClusterConfigurationError(file: "configuration", key: key, expected: "\(what) (required with security.mode \"curve\")", found: "nothing")
        }
        return path
    }

    private static func keyText(_ path: String, what: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "an unreadable file" : "no such file"
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
