/// What the tests read of `/api/tree` (absent fields are left out of the JSON, so the optional
/// ones here decode from every answer).
package struct TreeJSON: Decodable {
    package struct Location: Decodable {
        package var process: String
        package var pid: Int32?
        package var host: String?
    }
    package struct Events: Decodable {
        package var sent: UInt64
        package var acknowledged: UInt64
        package var outstanding: Int
    }
    package struct Node: Decodable {
        package var path: String
        package var type: String
        package var key: String
        package var depth: Int
        package var runsOn: Location?
        package var status: String
        /// Why a child is `starting` or `unavailable`, or where it runs.
        package var detail: String
        package var placement: String
        package var propsBytes: Int?
        package var renderingBytes: Int?
        package var events: Events?
        package var lastRoundTripMilliseconds: Double?
        package var epoch: UInt64?
        package var placedAt: String?
    }
    package struct Worker: Decodable {
        package var name: String
        package var pool: String
        package var load: Int
        package var capacity: Int
        package var configured: Bool
    }
    package struct Root: Decodable {
        package var name: String
        package var runsOn: Location
        package var renderingSequence: UInt64
    }
    package var root: Root
    package var nodes: [Node]
    package var workers: [Worker]
    package var missingWorkers: [String]
    /// The coordinator's sessions (the shared root's inspection, with sessions on).
    package var sessions: [Session]?

    package struct Session: Decodable, Sendable {
        package var label: String
        package var root: String
        package var state: String
        package var clients: Int
    }
}
