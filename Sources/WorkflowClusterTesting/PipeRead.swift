import Foundation

/// Reads a pipe with `read(2)`, retrying a read that a signal interrupted.
///
/// Foundation's `FileHandle.availableData` and `readDataToEndOfFile()` stop the whole test
/// process with a fatal error when a read returns `EINTR`, and a test process receives signals
/// (`SIGCHLD` each time a daemon it started stops, continues or exits). So the test support reads
/// its daemons' pipes here.
public enum PipeRead {
    /// The bytes one read returns (blocking until some arrive); empty at the pipe's end or on an
    /// error other than an interruption.
    public static func some(from handle: FileHandle, atMost count: Int = 1 << 16) -> Data {
        var buffer = [UInt8](repeating: 0, count: count)
        while true {
            let got = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if got >= 0 { return Data(buffer[0..<got]) }
            if errno != EINTR { return Data() }
        }
    }

    /// Everything until the pipe's end.
    public static func all(from handle: FileHandle) -> Data {
        var data = Data()
        while case let chunk = some(from: handle), !chunk.isEmpty { data.append(chunk) }
        return data
    }
}
