import CZeroMQ

/// Typed access to socket options (`zmq_setsockopt` / `zmq_getsockopt`).
///
/// One overload per value type keeps call sites short (`socket.set(.linger, 0)`) while
/// the option key's generic parameter guarantees the value has the type libzmq expects.
extension ZMQSocket {
    /// Passes raw bytes to `zmq_setsockopt`.
    private func setRaw(_ code: Int32, _ value: [UInt8]) throws(ZMQError) {
        let handle = try requireHandle()
        let result = value.withUnsafeBytes { zmq_setsockopt(handle, code, $0.baseAddress, $0.count) }
        guard result == 0 else { throw ZMQError.last() }
    }

    /// The in-memory bytes of a fixed-size integer, as libzmq expects them.
    private static func rawBytes<T: FixedWidthInteger>(of value: T) -> [UInt8] {
        withUnsafeBytes(of: value) { Array($0) }
    }

    /// Reads up to `capacity` bytes from `zmq_getsockopt`, returning what libzmq wrote.
    private func getRaw(_ code: Int32, capacity: Int) throws(ZMQError) -> [UInt8] {
        let handle = try requireHandle()
        var buffer = [UInt8](repeating: 0, count: capacity)
        var size = capacity
        let result = buffer.withUnsafeMutableBytes { zmq_getsockopt(handle, code, $0.baseAddress, &size) }
        guard result == 0 else { throw ZMQError.last() }
        return Array(buffer.prefix(size))
    }

    /// Sets an integer option (milliseconds, counts, ...).
    public func set(_ option: ZMQSocketOption<Int32>, _ value: Int32) throws(ZMQError) {
        try setRaw(option.code, Self.rawBytes(of: value))
    }

    /// Reads an integer option.
    public func get(_ option: ZMQSocketOption<Int32>) throws(ZMQError) -> Int32 {
        let bytes = try getRaw(option.code, capacity: MemoryLayout<Int32>.size)
        return bytes.withUnsafeBytes { $0.loadUnaligned(as: Int32.self) }
    }

    /// Sets a 64-bit integer option (sizes).
    public func set(_ option: ZMQSocketOption<Int64>, _ value: Int64) throws(ZMQError) {
        try setRaw(option.code, Self.rawBytes(of: value))
    }

    /// Reads a 64-bit integer option.
    public func get(_ option: ZMQSocketOption<Int64>) throws(ZMQError) -> Int64 {
        let bytes = try getRaw(option.code, capacity: MemoryLayout<Int64>.size)
        return bytes.withUnsafeBytes { $0.loadUnaligned(as: Int64.self) }
    }

    /// Sets a boolean option (libzmq represents it as an `int` 0/1).
    public func set(_ option: ZMQSocketOption<Bool>, _ value: Bool) throws(ZMQError) {
        try set(ZMQSocketOption<Int32>(code: option.code), value ? 1 : 0)
    }

    /// Reads a boolean option. Some boolean options (e.g. `routerMandatory`) are
    /// write-only in libzmq and fail with `EINVAL`.
    public func get(_ option: ZMQSocketOption<Bool>) throws(ZMQError) -> Bool {
        try get(ZMQSocketOption<Int32>(code: option.code)) != 0
    }

    /// Sets a binary option (routing id, subscription prefix).
    public func set(_ option: ZMQSocketOption<[UInt8]>, _ value: [UInt8]) throws(ZMQError) {
        try setRaw(option.code, value)
    }

    /// Reads a binary option (at most 255 bytes, the libzmq maximum for routing ids).
    public func get(_ option: ZMQSocketOption<[UInt8]>) throws(ZMQError) -> [UInt8] {
        try getRaw(option.code, capacity: 255)
    }

    /// Sets a string option (passed without a terminating NUL).
    public func set(_ option: ZMQSocketOption<String>, _ value: String) throws(ZMQError) {
        try setRaw(option.code, Array(value.utf8))
    }

    /// Reads a string option (libzmq returns it NUL-terminated).
    public func get(_ option: ZMQSocketOption<String>) throws(ZMQError) -> String {
        let bytes = try getRaw(option.code, capacity: 1024)
        let end = bytes.firstIndex(of: 0) ?? bytes.endIndex
        return String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// Sets a CURVE key option using the key's 32 raw bytes.
    public func set(_ option: ZMQSocketOption<CurveKey>, _ value: CurveKey) throws(ZMQError) {
        try setRaw(option.code, value.bytes)
    }

    /// Reads a CURVE key option in its 32-byte binary form.
    public func get(_ option: ZMQSocketOption<CurveKey>) throws(ZMQError) -> CurveKey {
        let bytes = try getRaw(option.code, capacity: 32)
        guard bytes.count == 32 else { throw ZMQError(code: EINVAL) }
        return CurveKey(trusted: bytes)
    }
}
