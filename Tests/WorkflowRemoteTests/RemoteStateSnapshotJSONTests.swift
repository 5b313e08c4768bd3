import Foundation
import RemoteTestSupport
import Testing
@testable import WorkflowRemote
import Workflow

/// A remote child's stand-in writes its snapshot JSON itself (`SnapshotJSONWriting`): the same
/// fields and values its `Codable` conformance encodes, read back by that conformance.
@Suite struct RemoteStateSnapshotJSONTests {
    typealias State = RemoteWorkflow<OutputCountingWorkflow>.State

    static func state(snapshot: TreeSnapshot?, events: [PendingRemoteEvent], rendering: [UInt8]?) -> State {
        let state = State()
        state.restoredSnapshot = snapshot
        state.restoredEvents = events
        state.restoredRendering = rendering
        return state
    }

    /// The JSON as a value that ignores key order.
    static func object(_ bytes: some DataProtocol) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary)
    }

    @Test(arguments: [false, true])
    func writesWhatItsCodableConformanceEncodes(full: Bool) throws {
        let child = TreeSnapshot(
            workflowType: "Child/\"x\"", stateVersion: 3, state: Data((0...255).map(UInt8.init)),
            children: [.init(key: "k\n", snapshot: TreeSnapshot(workflowType: "Leaf", state: nil))])
        let state = full
            ? Self.state(
                snapshot: child, events: [.init(token: "t/1@a", bytes: Data([0xFF, 0xFE, 0])), .init(token: "é", bytes: Data())],
                rendering: Array(#"{"a":"/"}"#.utf8))
            : Self.state(snapshot: nil, events: [], rendering: nil)
        let direct = state.snapshotJSON()
        #expect(try Self.object(direct) == Self.object(JSONEncoder().encode(state)))
        let read = try JSONDecoder().decode(State.self, from: Data(direct))
        #expect(read.restoredSnapshot == state.restoredSnapshot)
        #expect(read.restoredEvents == state.restoredEvents)
        #expect(read.restoredRendering == state.restoredRendering)
    }
}
