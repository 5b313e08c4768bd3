import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// TCP ports on 127.0.0.1 for a test's servers that take a port number (PostgreSQL, a gateway
/// that must keep its port across a restart), where port 0 cannot be used.
public enum LoopbackPort {
    /// Why no port could be found.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed, with errno.
        public var description: String
    }

    /// A port nothing listens on now: the kernel's pick for port 0, released at once (another
    /// process could take it before the test's server binds it; rare, and the test then fails
    /// saying the port is in use, never silently).
    public static func unused() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "cannot make a socket to find a free port: errno \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let found = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard found else { throw Failure(description: "cannot find a free port on 127.0.0.1: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
