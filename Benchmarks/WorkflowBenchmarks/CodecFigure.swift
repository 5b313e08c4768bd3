import WireProtocol
import WorkflowExamples

/// Figure 6: JSON vs binary encode+decode of the demo's props and a rendering-sized value.
func codecFigures() throws -> [Figure] {
    let props = EmailBrowserWorkflow(messageIDs: Array(1...20))
    let inbox = InboxWorkflow(messageIDs: Array(1...50))
    var figures: [Figure] = []
    func time<T: Codable & Equatable & Sendable>(_ value: T, _ codec: some WireCodec) throws -> Double {
        let iterations = 20_000
        for _ in 0..<1_000 { _ = try wireRoundTrip(value, through: codec) }
        return try measure { for _ in 0..<iterations { _ = try wireRoundTrip(value, through: codec) } } / Double(iterations)
    }
    let binaryProps = try time(props, BinaryWireCodec())
    let jsonProps = try time(props, JSONWireCodec())
    figures.append(Figure(name: "6 codec: browser props (binary vs JSON)", value: binaryProps, unit: "ns", baseline: jsonProps, goal: "< JSON", met: binaryProps < jsonProps))
    let binaryInbox = try time(inbox, BinaryWireCodec())
    let jsonInbox = try time(inbox, JSONWireCodec())
    figures.append(Figure(name: "6 codec: inbox of 50 (binary vs JSON)", value: binaryInbox, unit: "ns", baseline: jsonInbox, goal: "< JSON", met: binaryInbox < jsonInbox))
    return figures
}
