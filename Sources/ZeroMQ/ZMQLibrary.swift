import CZeroMQ

/// Facts about the libzmq the process actually loaded.
///
/// The package builds against whatever libzmq the system provides, so capability checks
/// (CURVE needs libsodium, ipc needs a POSIX platform) must be made at runtime rather than
/// assumed; tests and the secure transport use these to fail with a clear message.
public enum ZMQLibrary {
    /// A libzmq version triple, comparable so callers can gate on minimum versions.
    public struct Version: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// Major version (API-breaking changes).
        public let major: Int
        /// Minor version (feature additions).
        public let minor: Int
        /// Patch version (fixes).
        public let patch: Int

        /// Creates a version, e.g. a minimum to compare ``ZMQLibrary/version`` against.
        public init(major: Int, minor: Int, patch: Int) {
            self.major = major
            self.minor = minor
            self.patch = patch
        }

        /// Orders versions component-wise, major first.
        public static func < (lhs: Version, rhs: Version) -> Bool {
            (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
        }

        /// Dotted form, e.g. `4.3.4`.
        public var description: String { "\(major).\(minor).\(patch)" }
    }

    /// The version of the libzmq loaded at runtime (not the headers compiled against).
    public static var version: Version {
        var major: Int32 = 0
        var minor: Int32 = 0
        var patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return Version(major: Int(major), minor: Int(minor), patch: Int(patch))
    }

    /// Whether libzmq was built with a capability such as `"curve"`, `"ipc"` or `"draft"`
    /// (`zmq_has`).
    public static func has(_ capability: String) -> Bool {
        zmq_has(capability) != 0
    }

    /// Whether CURVE encryption is available; secure transports must check this first
    /// because a libzmq built without libsodium rejects CURVE options with `ENOTSUP`.
    public static var hasCurve: Bool { has("curve") }
}
