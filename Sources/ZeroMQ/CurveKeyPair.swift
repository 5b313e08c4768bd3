import CZeroMQ

/// A CURVE long-term key pair.
///
/// A server needs its pair to accept encrypted connections; a client needs its own pair
/// plus the server's public key. Deriving the public key from a stored secret key lets a
/// process persist only the secret.
public struct CurveKeyPair: Sendable, Hashable {
    /// The shareable half; clients configure it as the server key.
    public let publicKey: CurveKey
    /// The private half; never send or log it.
    public let secretKey: CurveKey

    /// Generates a fresh random key pair (`zmq_curve_keypair`).
    ///
    /// Throws `ENOTSUP` (as ``ZMQError``) when libzmq was built without CURVE.
    public static func generate() throws(ZMQError) -> CurveKeyPair {
        var publicText = [CChar](repeating: 0, count: 41)
        var secretText = [CChar](repeating: 0, count: 41)
        guard zmq_curve_keypair(&publicText, &secretText) == 0 else { throw ZMQError.last() }
        return try CurveKeyPair(publicZ85: publicText, secretZ85: secretText)
    }

    /// Rebuilds a pair from a secret key by deriving its public key (`zmq_curve_public`).
    public init(secretKey: CurveKey) throws(ZMQError) {
        var secretText = [CChar](repeating: 0, count: 41)
        var publicText = [CChar](repeating: 0, count: 41)
        secretKey.bytes.withUnsafeBufferPointer { source in
            _ = zmq_z85_encode(&secretText, source.baseAddress, source.count)
        }
        guard zmq_curve_public(&publicText, secretText) == 0 else { throw ZMQError.last() }
        try self.init(publicZ85: publicText, secretZ85: secretText)
    }

    /// Decodes the NUL-terminated Z85 buffers libzmq filled in.
    private init(publicZ85: [CChar], secretZ85: [CChar]) throws(ZMQError) {
        guard
            let publicBytes = try? Z85.decode(decodeCString(publicZ85)),
            let secretBytes = try? Z85.decode(decodeCString(secretZ85)),
            publicBytes.count == 32, secretBytes.count == 32
        else { throw ZMQError(code: EINVAL) }
        self.publicKey = CurveKey(trusted: publicBytes)
        self.secretKey = CurveKey(trusted: secretBytes)
    }
}
