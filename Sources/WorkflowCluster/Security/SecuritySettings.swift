/// How the cluster's sockets are secured, as the configuration file's `security` section says.
///
/// Keys live in files, never in the configuration itself: the configuration is shared by every
/// machine, while each secret must exist only where it is used (the coordinator's secret on the
/// coordinator, a worker's secret on that worker). The paths are resolved into runtime settings
/// by `CurveKeyFiles` at start, so a missing, malformed or too-readable key stops the daemon
/// before it opens a socket.
package struct SecuritySettings: Sendable, Equatable {
    /// The transport security modes.
    package enum Mode: String, Sendable, Equatable, CaseIterable {
        /// No encryption or authentication: only where the transport itself is private (an ipc
        /// socket file guarded by its permissions) or when the file asks for it explicitly.
        case plaintext
        /// ZeroMQ CURVE: encrypted, and only workers whose public key is allow-listed may join.
        case curve
    }

    /// The mode the file asked for, or `nil` when it did not say: then `mode(for:)` chooses
    /// CURVE for a tcp endpoint, so a cluster port is never unencrypted by omission.
    package var mode: Mode?
    /// The directory `workflow-coordinator keygen` writes into (`security.keys_dir`, default
    /// `keys` beside the configuration file); each key path below defaults to its file there.
    package var keysDirectory: String?
    /// The coordinator's public key file (Z85 text); workers read it to authenticate the
    /// coordinator.
    package var serverPublicKeyPath: String?
    /// The coordinator's secret key file (Z85 text, mode 0600); the coordinator only.
    package var serverSecretKeyPath: String?
    /// The allow-list file: one worker public key (Z85) per line, `#` comments; the coordinator
    /// refuses any other key at the handshake.
    package var allowedClientKeysPath: String?
    /// A directory holding each worker's secret key as `<worker-name>.key` (mode 0600).
    package var clientKeysDirectory: String?
    /// One worker's secret key file, overriding `clientKeysDirectory` (for a machine that runs
    /// a single worker).
    package var clientSecretKeyPath: String?
    /// Whether plaintext may be used on a non-loopback tcp address (default false: refused at
    /// start, so an unencrypted cluster port is never exposed by accident).
    package var allowPlaintextOnNetwork: Bool

    /// Creates settings (the endpoint's default mode unless told otherwise).
    package init(
        mode: Mode? = nil, keysDirectory: String? = nil, serverPublicKeyPath: String? = nil, serverSecretKeyPath: String? = nil,
        allowedClientKeysPath: String? = nil, clientKeysDirectory: String? = nil, clientSecretKeyPath: String? = nil,
        allowPlaintextOnNetwork: Bool = false
    ) {
        self.mode = mode
        self.keysDirectory = keysDirectory
        self.serverPublicKeyPath = serverPublicKeyPath
        self.serverSecretKeyPath = serverSecretKeyPath
        self.allowedClientKeysPath = allowedClientKeysPath
        self.clientKeysDirectory = clientKeysDirectory
        self.clientSecretKeyPath = clientSecretKeyPath
        self.allowPlaintextOnNetwork = allowPlaintextOnNetwork
    }

    /// The mode in force for a coordinator at `endpoint`: the explicit `mode`, else CURVE for
    /// tcp and plaintext for ipc/inproc (whose access the file system or the process guards).
    package func mode(for endpoint: String) -> Mode {
        mode ?? (endpoint.hasPrefix("tcp://") ? .curve : .plaintext)
    }

    /// The secret key file of worker `name`: `clientSecretKeyPath`, else
    /// `clientKeysDirectory/<name>.key`.
    package func clientSecretKeyPath(forWorker name: String) -> String? {
        if let clientSecretKeyPath { return clientSecretKeyPath }
        guard let clientKeysDirectory else { return nil }
        return clientKeysDirectory.hasSuffix("/") ? clientKeysDirectory + name + ".key" : clientKeysDirectory + "/" + name + ".key"
    }
}
