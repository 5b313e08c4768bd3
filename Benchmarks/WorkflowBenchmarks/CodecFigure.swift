import WireProtocol
import RemoteTestSupport

/// Figure 6: JSON vs binary encode+decode of a root's props and a list pane's props.
func codecFigures() throws -> [Figure] {
    let props = ListDetailWorkflow(ids: Array(1...20), listPlacement: .local, detailPlacement: .local)
    let list = ListPaneWorkflow(ids: Array(1...50))
    var figures: [Figure] = []
    func time<T: Codable & Equatable & Sendable>(_ value: T, _ codec: some WireCodec) throws -> Double {
        let iterations = 20_000
        for _ in 0..<1_000 { _ = try wireRoundTrip(value, through: codec) }
        return try measure { for _ in 0..<iterations { _ = try wireRoundTrip(value, through: codec) } } / Double(iterations)
    }
    let binaryProps = try time(props, BinaryWireCodec())
    let jsonProps = try time(props, JSONWireCodec())
    figures.append(Figure(name: "6 codec: root props (binary vs JSON)", value: binaryProps, unit: "ns", baseline: jsonProps, goal: "< JSON", met: binaryProps < jsonProps))
    let binaryList = try time(list, BinaryWireCodec())
    let jsonList = try time(list, JSONWireCodec())
    figures.append(Figure(name: "6 codec: list of 50 ids (binary vs JSON)", value: binaryList, unit: "ns", baseline: jsonList, goal: "< JSON", met: binaryList < jsonList))
    return figures
}
