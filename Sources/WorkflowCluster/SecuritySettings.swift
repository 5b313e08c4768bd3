/// How the cluster's sockets are secured.
///
/// Only plaintext is implemented; the CURVE key paths are reserved in the file format now so
/// that enabling encryption later does not change the format operators already use.
public struct SecuritySettings: Sendable, Equatable {
    /// The transport security modes.
    public enum Mode: String, Sendable, Equatable, CaseIterable {
        /// No encryption or authentication (trusted networks and development only).
        case plaintext
        /// ZeroMQ CURVE (reserved; rejected at start until implemented).
        case curve
    }

    /// The mode.
    public var mode: Mode
    /// Reserved for CURVE: the coordinator's public key file.
    public var serverPublicKeyPath: String?
    /// Reserved for CURVE: the coordinator's secret key file.
    public var serverSecretKeyPath: String?
    /// Reserved for CURVE: a worker's public key file.
    public var clientPublicKeyPath: String?
    /// Reserved for CURVE: a worker's secret key file.
    public var clientSecretKeyPath: String?

    /// Creates settings (plaintext unless told otherwise).
    public init(
        mode: Mode = .plaintext, serverPublicKeyPath: String? = nil, serverSecretKeyPath: String? = nil,
        clientPublicKeyPath: String? = nil, clientSecretKeyPath: String? = nil
    ) {
        self.mode = mode
        self.serverPublicKeyPath = serverPublicKeyPath
        self.serverSecretKeyPath = serverSecretKeyPath
        self.clientPublicKeyPath = clientPublicKeyPath
        self.clientSecretKeyPath = clientSecretKeyPath
    }
}
