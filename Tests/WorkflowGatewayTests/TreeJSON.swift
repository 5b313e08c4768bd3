/// What the gateway tests read of `/api/tree` (absent fields are left out of the JSON, so the
/// optional ones here decode from every answer).
struct TreeJSON: Decodable {
    struct Location: Decodable {
        var process: String
        var pid: Int32?
        var host: String?
    }
    struct Events: Decodable {
        var sent: UInt64
        var acknowledged: UInt64
        var outstanding: Int
    }
    struct Node: Decodable {
        var path: String
        var type: String
        var key: String
        var depth: Int
        var runsOn: Location?
        var status: String
        var placement: String
        var propsBytes: Int?
        var renderingBytes: Int?
        var events: Events?
        var lastRoundTripMilliseconds: Double?
        var epoch: UInt64?
        var placedAt: String?
    }
    struct Worker: Decodable {
        var name: String
        var pool: String
        var load: Int
        var capacity: Int
        var configured: Bool
    }
    struct Root: Decodable {
        var name: String
        var runsOn: Location
        var renderingSequence: UInt64
    }
    var root: Root
    var nodes: [Node]
    var workers: [Worker]
    var missingWorkers: [String]
}
