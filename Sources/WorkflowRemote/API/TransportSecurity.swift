import ZeroMQ

/// How a parent's listening socket authenticates the workers that connect to it.
///
/// With CURVE the parent holds a server key pair and admits only workers whose public key is in
/// `allowedClientKeys` (checked by the runtime's ZAP handler): an unlisted worker never gets past
/// the handshake, so it can neither receive props nor send outputs. Traffic is encrypted.
public enum ServerSecurity: Sendable, Equatable {
    /// No authentication or encryption: only for loopback/ipc, or when explicitly forced.
    case plaintext
    /// CURVE with this server key pair and allow-list of worker public keys.
    case curve(keyPair: CurveKeyPair, allowedClientKeys: Set<CurveKey>)
}

/// How a worker authenticates itself to its parent and checks the parent's identity.
public enum ClientSecurity: Sendable, Equatable {
    /// No authentication or encryption.
    case plaintext
    /// CURVE with this worker key pair, trusting only a parent that holds `serverKey`'s secret.
    case curve(keyPair: CurveKeyPair, serverKey: CurveKey)
}

extension RemoteRuntimeConfiguration {
    /// Whether `endpoint` is reachable only from this machine (ipc, inproc, loopback tcp).
    static func isLocalOnly(_ endpoint: String) -> Bool {
        guard endpoint.hasPrefix("tcp://") else { return true }
        let address = endpoint.dropFirst("tcp://".count)
        return address.hasPrefix("127.") || address.hasPrefix("localhost:") || address.hasPrefix("[::1]:")
    }
}
