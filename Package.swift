// swift-tools-version: 6.1
import PackageDescription

// Modules, bottom to top (each depends only downward):
//   Workflow            core runtime (no I/O)
//   WorkflowTesting     render/action testers over Swift Testing
//   CZeroMQ / ZeroMQ    the system libzmq and the project's thin, safe binding
//   WireProtocol        envelope + Codable wire codecs (no sockets)
//   WorkflowRemote      remote children: proxies, worker hosting, the socket-owning loop
//   WorkflowExamples    the seeds' example workflows
let package = Package(
    name: "DistributedWorkflow",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Workflow", targets: ["Workflow"]),
        .library(name: "WorkflowTesting", targets: ["WorkflowTesting"]),
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "WireProtocol", targets: ["WireProtocol"]),
        .library(name: "WorkflowRemote", targets: ["WorkflowRemote"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        .target(name: "Workflow"),
        .target(name: "WorkflowTesting", dependencies: ["Workflow"]),
        .systemLibrary(
            name: "CZeroMQ",
            providers: [.apt(["libzmq3-dev"])]
        ),
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ"]),
        // A tiny peer process the ZeroMQ tests spawn to prove traffic crosses processes.
        .executableTarget(name: "zmq-test-peer", dependencies: ["ZeroMQ"], path: "Tests/Helpers/zmq-test-peer"),
        .target(name: "WireProtocol"),
        .target(
            name: "WorkflowRemote",
            dependencies: ["Workflow", "ZeroMQ", "WireProtocol", .product(name: "Logging", package: "swift-log")]),
        .target(name: "WorkflowExamples", dependencies: ["Workflow", "WorkflowRemote"]),
        // Workflows and a worker process used by the remote-runtime tests.
        .target(name: "RemoteTestSupport", dependencies: ["Workflow", "WorkflowRemote"], path: "Tests/Helpers/RemoteTestSupport"),
        .executableTarget(
            name: "remote-test-worker", dependencies: ["RemoteTestSupport", "WorkflowExamples", "WorkflowRemote"],
            path: "Tests/Helpers/remote-test-worker"),
        .testTarget(name: "WorkflowTests", dependencies: ["Workflow", "WorkflowTesting", "WorkflowExamples"]),
        .testTarget(name: "WorkflowTestingTests", dependencies: ["Workflow", "WorkflowTesting", "WorkflowExamples"]),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ", "zmq-test-peer"]),
        .testTarget(name: "WireProtocolTests", dependencies: ["WireProtocol"]),
        .testTarget(
            name: "WorkflowRemoteTests",
            dependencies: ["WorkflowRemote", "RemoteTestSupport", "WorkflowExamples", "ZeroMQ", "WireProtocol", "remote-test-worker"]),
    ],
    swiftLanguageModes: [.v6]
)
