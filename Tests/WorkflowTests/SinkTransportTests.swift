import Foundation
import Synchronization
import Testing
@_spi(WorkflowRuntime) import Workflow

/// A decoder finds its sink importer in `userInfo` either as the runtime puts it there (wrapped
/// in `SinkTransport`, the cheap cast) or plain (as any other code may): both must work.
struct SinkTransportTests {
    private final class RecordingImporter: SinkImporter {
        let sent = Mutex<[String]>([])

        func importSink(token: String) -> @Sendable (any Encodable & Sendable) -> Bool {
            { event in
                self.sent.withLock { $0.append("\(token)=\(event)") }
                return true
            }
        }

        func localToken(for token: String) -> String { "local~\(token)" }
    }

    private static func decodeSink(userInfo: (RecordingImporter) -> any Sendable) throws -> (Sink<Int>, RecordingImporter) {
        let importer = RecordingImporter()
        let decoder = JSONDecoder()
        decoder.userInfo[.workflowSinkImporter] = userInfo(importer)
        return (try decoder.decode(Sink<Int>.self, from: Data("\"7:0:Swift.Int@1.2\"".utf8)), importer)
    }

    @Test func aWrappedImporterDecodesSinks() throws {
        let (sink, importer) = try Self.decodeSink { SinkTransport<any SinkImporter>($0) }
        sink.send(3)
        #expect(importer.sent.withLock { $0 } == ["7:0:Swift.Int@1.2=3"])
    }

    @Test func aPlainImporterStillDecodesSinks() throws {
        let (sink, importer) = try Self.decodeSink { $0 }
        sink.send(4)
        #expect(importer.sent.withLock { $0 } == ["7:0:Swift.Int@1.2=4"])
    }

    @Test func withoutAnImporterDecodingFails() {
        #expect(throws: SinkCodingError.self) {
            try JSONDecoder().decode(Sink<Int>.self, from: Data("\"7:0:Swift.Int@1.2\"".utf8))
        }
    }
}
