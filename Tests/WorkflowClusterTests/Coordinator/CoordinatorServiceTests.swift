import Foundation
import Logging
import RemoteTestSupport
import Testing
import WorkflowCluster
import WorkflowClusterTesting

/// `CoordinatorService` in this process with a generic root: no example, no selections, no
/// workers, and companions that drive it through the session.
@Suite("Coordinator with a generic root")
struct CoordinatorServiceTests {
    /// A companion running `body`.
    struct Companion: RootCompanion {
        let body: @Sendable (any ClusterRootSession) async throws -> RootCompanionEnd
        func run(session: any ClusterRootSession, context: CoordinatorContext) async throws -> RootCompanionEnd {
            try await body(session)
        }
    }

    struct Broken: Error, CustomStringConvertible {
        var description: String { "broken on purpose" }
    }

    static func service(root: String = "", roots: RootWorkflowRegistry, companions: [any RootCompanion]) -> CoordinatorService {
        let endpoint = "ipc:///tmp/wf-coordinator-\(getpid())-\(UUID().uuidString.prefix(8))"
        var logger = Logger(label: "test.coordinator")
        logger.logLevel = .critical
        return CoordinatorService(
            configuration: ClusterConfiguration(coordinatorEndpoint: endpoint, root: root),
            options: CoordinatorOptions(companions: companions), roots: roots, logger: logger)
    }

    static let tallyRoots = RootWorkflowRegistry().registering("tally") { TallyWorkflow() }

    @Test("a trivial root is served: its JSON rendering, an event by token, and a companion that ends the run")
    func trivialRootIsServed() async throws {
        let companion = Companion { session in
            #expect(session.name == "tally")
            let first = try JSONDecoder().decode(TallyJSON.self, from: session.latestRendering.json)
            #expect(first.count == 0)
            try await session.send(event: Data("4".utf8), to: first.add)
            try await RootSessionTests.rendering(of: session, as: TallyJSON.self, "count 4") { $0.count == 4 }
            return .stopCoordinator
        }
        // The only registered root is hosted without being named.
        try await withSafetyTimeout("the coordinator to finish") {
            try await Self.service(roots: Self.tallyRoots, companions: [companion]).run()
        }
    }

    @Test("a companion's failure stops the coordinator with that failure")
    func companionFailure() async throws {
        let companion = Companion { _ in throw Broken() }
        await #expect {
            try await withSafetyTimeout("the coordinator to fail") {
                try await Self.service(roots: Self.tallyRoots, companions: [companion]).run()
            }
        } throws: { error in
            (error as? CoordinatorService.CompanionFailure)?.description == "broken on purpose"
        }
    }

    @Test("an unknown root, or none named among several, is a typed failure naming the known roots")
    func rootChoice() async throws {
        await #expect(throws: RootWorkflowRegistry.SelectionError.unknownRoot("my-app", known: ["tally"])) {
            try await Self.service(root: "my-app", roots: Self.tallyRoots, companions: []).run()
        }
        let two = Self.tallyRoots.registering("other") { TallyWorkflow() }
        await #expect(throws: RootWorkflowRegistry.SelectionError.rootNotNamed(known: ["other", "tally"])) {
            try await Self.service(roots: two, companions: []).run()
        }
        #expect(try Self.tallyRoots.root(configured: "").name == "tally")
    }
}
