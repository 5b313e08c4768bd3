import RemoteTestSupport
import Testing
import WireProtocol
@testable import WorkflowRemote

/// A worker's HELLO says which state version of each hosted type its build reads and writes, in
/// an optional field that parents and workers of builds before it skip or leave out, in every
/// protocol version (docs/WIRE-PROTOCOL.md, "State versions").
@Suite struct HelloStateVersionsTests {
    /// What a parent reads of a HELLO: a struct without `stateVersions`, as in builds that predate it.
    struct EarlierHello: Codable, Equatable {
        var name: String
        var hostedTypes: [String]
        var protocolVersions: [Int]?
    }

    /// The keys of a keyed value.
    struct ProbeOfKeys: Decodable {
        var keys: Set<String>
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
        init(from decoder: any Decoder) throws {
            keys = Set(try decoder.container(keyedBy: Key.self).allKeys.map(\.stringValue))
        }
    }

    static let codecs: [any WireCodec] = [BinaryWireCodec(), JSONWireCodec()]

    @Test("a registry knows each type's state version: a workflow's declared stateVersion, else 1")
    func registryStateVersions() {
        let registry = RemotableRegistry().registering(LedgerWorkflowNext.self).registering(CounterWorkflow.self)
        #expect(registry.stateVersions[LedgerWorkflowNext.remoteTypeName] == LedgerWorkflowNext.stateVersion)
        #expect(LedgerWorkflowNext.stateVersion == 2)
        #expect(registry.stateVersions[CounterWorkflow.remoteTypeName] == 1)
    }

    @Test("a parent that predates stateVersions reads a HELLO carrying them; a HELLO without them decodes with none")
    func compatibleBothWays() throws {
        let hello = HelloPayload(
            name: "w", pool: "p", hostedTypes: [LedgerWorkflowNext.remoteTypeName], capacity: 10, protocolVersion: 5, protocolVersions: [4, 5],
            instance: "i", processID: 7, hostName: "h", stateVersions: [LedgerWorkflowNext.remoteTypeName: 2])
        let earlier = EarlierHello(name: "w", hostedTypes: [LedgerWorkflowNext.remoteTypeName], protocolVersions: [4, 5])
        // A worker that predates the field sends what this build sends without it.
        var withoutVersions = hello
        withoutVersions.stateVersions = nil
        for codec in Self.codecs {
            let bytes = try codec.encode(hello)
            #expect(try codec.decode(EarlierHello.self, from: bytes) == earlier, "\(codec)")
            let decoded = try codec.decode(HelloPayload.self, from: bytes)
            #expect(decoded.stateVersions == [LedgerWorkflowNext.remoteTypeName: 2])
            let old = try codec.encode(withoutVersions)
            #expect(try codec.decode(ProbeOfKeys.self, from: old).keys.contains("stateVersions") == false, "\(codec): an absent field is not written")
            let fromEarlier = try codec.decode(HelloPayload.self, from: old)
            #expect(fromEarlier.stateVersions == nil)
            #expect(fromEarlier.name == "w" && fromEarlier.protocolVersions == [4, 5])
        }
    }
}
