import Foundation

/// Writes whole lines to standard output, unbuffered.
///
/// Unbuffered so that a reader of a pipe (a test, `tee`) sees each line as soon as the event
/// happened; one `write` per line so that lines from concurrent tasks never interleave.
enum StandardOutput {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// A JSON line for `object` (sorted keys, so lines are stable).
    static func json(_ object: [String: String]) {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        line(String(decoding: data, as: UTF8.self))
    }
}
