import Foundation
import WorkflowClusterTesting

/// A loopback TCP port whose connections the kernel accepts and nobody ever reads: a server that
/// hangs, for the timeout tests.
package enum SilentListener {
    /// Runs `body` with the port; the socket is closed when it ends.
    package static func with<T>(_ body: (Int) async throws -> T) async throws -> T {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw WaitFailure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && listen(descriptor, 8) == 0
                    && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else { throw WaitFailure(description: "bind/listen: \(String(cString: strerror(errno)))") }
        return try await body(Int(UInt16(bigEndian: address.sin_port)))
    }
}
