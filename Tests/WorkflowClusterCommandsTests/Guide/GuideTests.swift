import Foundation
import Testing
import Workflow
import WorkflowRemote
import WorkflowClusterTesting

/// Runs the guide's examples (GuideExamples.swift) and checks that the guide shows exactly them.
@Suite("docs/GUIDE.md")
struct GuideTests {
    static let repository = repositoryFolder(holding: "docs/GUIDE.md", from: #filePath) ?? URL(fileURLWithPath: "/")

    /// A unique ipc endpoint (tests run in parallel in one process).
    static func endpoint(_ name: String) -> String {
        "ipc:///tmp/wf-guide-\(getpid())-\(name)-\(UUID().uuidString.prefix(8))"
    }

    @Test("a room keeps its posts")
    func room() async {
        #expect(await postTwice() == ["hello", "is anyone here?"])
    }

    @Test("a rename is answered with the rendering that shows it")
    func renameIsAnswered() async {
        let host = WorkflowHost(workflow: RoomWorkflow(name: "general"))
        #expect(await rename(host, to: "random") == "random")
        #expect(host.rendering.name == "random")
        await host.stop()
        #expect(await rename(host, to: "after") == nil)
    }

    @Test("a worker's result reaches its workflow as an action")
    func historyLoads() async throws {
        let host = WorkflowHost(workflow: HistoryWorkflow(room: "general"))
        try await withSafetyTimeout("the history") {
            for await history in host.renderings where history == ["welcome to #general"] { return }
        }
        await host.stop()
    }

    @Test("a page of one's own is an asset at /")
    func page() {
        #expect(dashboardPage.path == "/" && dashboardPage.contentType.hasPrefix("text/html"))
        #expect(String(decoding: dashboardPage.body, as: UTF8.self).contains(#"import { connect } from "/workflow-client.js""#))
    }

    @Test("a post in a room on a worker reaches the lobby")
    func remoteRoom() async throws {
        #expect(try await postInARemoteRoom(endpoint: Self.endpoint("remote-room")) == 1)
    }

    @Test("a remote room publishes frames like a local one: the lobby's count always matches the room", arguments: [false, true])
    func sameFrames(remote: Bool) async throws {
        let posts = 500
        let endpoint = Self.endpoint("frames")
        var parent: RemoteRuntime?
        var worker: RemoteRuntime?
        if remote {
            var parentConfiguration = RemoteRuntimeConfiguration(name: "lobby")
            parentConfiguration.listenEndpoint = endpoint
            parent = try RemoteRuntime(configuration: parentConfiguration)
            var workerConfiguration = RemoteRuntimeConfiguration(name: "worker-1")
            workerConfiguration.parentEndpoint = endpoint
            workerConfiguration.registry = RemotableRegistry().registering(RoomWorkflow.self)
            worker = try RemoteRuntime(configuration: workerConfiguration)
            await parent!.waitForWorkers(count: 1)
        }
        let published = await frames(placement: remote ? .anyWorker : .local, loop: parent, posts: posts)
        await worker?.shutdown()
        await parent?.shutdown()
        #expect(published.last?.counted == posts)
        let torn = published.filter { $0.messages != $0.counted }.count
        #expect(torn == 0, "\(torn) of \(published.count) frames torn, e.g. \(String(describing: published.first { $0.messages != $0.counted }))")
    }

    /// The ```swift blocks of docs/GUIDE.md.
    static func guideBlocks() throws -> [String] {
        let guide = try String(contentsOf: repository.appendingPathComponent("docs/GUIDE.md"), encoding: .utf8)
        var blocks: [String] = []
        var current: [Substring]?
        for line in guide.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The `GUIDE-BEGIN`…`GUIDE-END` blocks of every Swift file the guide may quote.
    static func compiledBlocks() throws -> [String] {
        var blocks: [String] = []
        let roots = ["Tests/WorkflowClusterCommandsTests/Guide", "Tests/WorkflowTestingTests", "Examples"].map { repository.appendingPathComponent($0) }
        for root in roots {
            guard let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { continue }
            for case let file as URL in files where file.pathExtension == "swift" && !file.path.contains("/.build") {
                let text = try String(contentsOf: file, encoding: .utf8)
                var current: [Substring]?
                for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                    let trimmed = line.trimmingCharacters(in: .whitespaces)
                    if trimmed.hasPrefix("// GUIDE-BEGIN") {
                        current = []
                    } else if trimmed == "// GUIDE-END" {
                        if let block = current { blocks.append(block.joined(separator: "\n")) }
                        current = nil
                    } else {
                        current?.append(line)
                    }
                }
            }
        }
        return blocks
    }

    @Test("every Swift block of the guide is code that a test compiles")
    func guideShowsCompiledCode() throws {
        let compiled = Set(try Self.compiledBlocks())
        let blocks = try Self.guideBlocks()
        #expect(blocks.count >= 5)
        for block in blocks {
            #expect(compiled.contains(block), "docs/GUIDE.md shows code no test compiles:\n\(block)")
        }
    }
}
