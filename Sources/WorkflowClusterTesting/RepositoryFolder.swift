import Foundation

/// The nearest folder at or above the folder of `file` that holds `marker` (a relative path such
/// as `scripts/netlab.sh`): how a test finds the repository's scripts and configuration files
/// wherever its own source file sits, and however deep.
///
/// `file` is the test's own `#filePath`. `nil` if no folder above holds `marker`.
public func repositoryFolder(holding marker: String, from file: String) -> URL? {
    var folder = URL(fileURLWithPath: file).deletingLastPathComponent()
    while folder.path != "/" {
        if FileManager.default.fileExists(atPath: folder.appendingPathComponent(marker).path) { return folder }
        folder = folder.deletingLastPathComponent()
    }
    return nil
}
