// swift-tools-version: 6.1
import PackageDescription

// Modules, bottom to top (each depends only downward):
//   Workflow            core runtime (no I/O)
//   WorkflowTesting     render/action testers over Swift Testing
//   CZeroMQ / ZeroMQ    the system libzmq and the project's thin, safe binding
//   WireProtocol        envelope + Codable wire codecs (no sockets)
//   WorkflowRemote      remote children: proxies, worker hosting, the socket-owning loop
//   WorkflowCluster     the daemons' logic: configuration, coordinator, worker, generic JSON root
//   WorkflowGateway     the coordinator's HTTP side: renderings, events, inspector, metrics, health
//   WorkflowClusterCommands  the daemons' command lines as entry points an application's @main calls
//   WorkflowExamples    the seeds' example workflows
//   EmailBrowserCluster the email browser as a cluster application (the shipped daemons)
let package = Package(
    name: "DistributedWorkflow",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Workflow", targets: ["Workflow"]),
        .library(name: "WorkflowTesting", targets: ["WorkflowTesting"]),
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "WireProtocol", targets: ["WireProtocol"]),
        .library(name: "WorkflowRemote", targets: ["WorkflowRemote"]),
        .library(name: "WorkflowCluster", targets: ["WorkflowCluster"]),
        .library(name: "WorkflowGateway", targets: ["WorkflowGateway"]),
        .library(name: "WorkflowClusterCommands", targets: ["WorkflowClusterCommands"]),
        .executable(name: "workflow-coordinator", targets: ["workflow-coordinator"]),
        .executable(name: "workflow-worker", targets: ["workflow-worker"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.8.0"),
        .package(
            url: "https://github.com/apple/swift-configuration", from: "1.4.0",
            traits: [.defaults, "CommandLineArguments", "Logging"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
        // The coordinator's embedded durable store (SQLite's source bundled: no system package).
        .package(url: "https://github.com/vapor/sqlite-nio", from: "1.13.0"),
        // `swift package generate-documentation` (scripts/docs.sh); a plugin, linked into nothing.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        .target(name: "Workflow"),
        .target(name: "WorkflowTesting", dependencies: ["Workflow"]),
        // libzmq from Debian's libzmq3-dev (zmq.h in /usr/include, libzmq.so on the default
        // path). No `pkgConfig: "libzmq"`: with it SwiftPM warns on every build about the
        // `-isystem` flags libzmq's .pc file carries, and the build must stay warning-free.
        .systemLibrary(
            name: "CZeroMQ",
            providers: [.apt(["libzmq3-dev"])]
        ),
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ"]),
        // A tiny peer process the ZeroMQ tests spawn to prove traffic crosses processes, and the
        // cluster tests spawn to flood a coordinator.
        .executableTarget(name: "zmq-test-peer", dependencies: ["ZeroMQ", "WireProtocol"], path: "Tests/Helpers/zmq-test-peer"),
        .target(name: "WireProtocol"),
        .target(
            name: "WorkflowRemote",
            dependencies: [
                "Workflow", "ZeroMQ", "WireProtocol", .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]),
        .target(name: "WorkflowExamples", dependencies: ["Workflow", "WorkflowRemote"]),
        // The cluster daemons' logic (configuration, coordinator, worker, logging, the generic
        // JSON root), testable; knows no example.
        .target(
            name: "WorkflowCluster",
            dependencies: [
                "Workflow", "WorkflowRemote", "ZeroMQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
            ]),
        // The coordinator's HTTP side (Hummingbird): the root's renderings and events for clients,
        // the tree inspector, Prometheus metrics and health probes; generic over the root.
        .target(
            name: "WorkflowGateway",
            dependencies: [
                "WorkflowCluster", "WorkflowRemote",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        // The daemons' command lines, as entry points an application's executables call.
        .target(
            name: "WorkflowClusterCommands",
            dependencies: [
                "Workflow", "WorkflowCluster", "WorkflowGateway", "WorkflowRemote",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"), .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // The email browser as a cluster application: its root, worker types, screens and demo.
        .target(
            name: "EmailBrowserCluster",
            dependencies: [
                "WorkflowCluster", "WorkflowClusterCommands", "WorkflowExamples", "WorkflowRemote",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(name: "workflow-coordinator", dependencies: ["EmailBrowserCluster", "WorkflowClusterCommands"]),
        .executableTarget(name: "workflow-worker", dependencies: ["EmailBrowserCluster", "WorkflowClusterCommands"]),
        // Workflows and a worker process used by the remote-runtime tests.
        .target(name: "RemoteTestSupport", dependencies: ["Workflow", "WorkflowRemote"], path: "Tests/Helpers/RemoteTestSupport"),
        .executableTarget(
            name: "remote-test-worker", dependencies: ["RemoteTestSupport", "WorkflowExamples", "WorkflowRemote"],
            path: "Tests/Helpers/remote-test-worker"),
        // The durability tests' coordinator and worker (one binary): they record every event's id, so
        // the tests see how often each accepted event took effect across coordinator SIGKILLs.
        .executableTarget(
            name: "durability-test-daemon",
            dependencies: ["RemoteTestSupport", "Workflow", "WorkflowCluster", "WorkflowClusterCommands", "WorkflowRemote"],
            path: "Tests/Helpers/durability-test-daemon"),
        // The benchmark suite (scripts/bench.sh): every figure beside its baseline, one table.
        .executableTarget(
            name: "workflow-bench",
            dependencies: ["Workflow", "WorkflowRemote", "RemoteTestSupport", "WorkflowExamples", "ZeroMQ", "WireProtocol"],
            path: "Benchmarks/WorkflowBenchmarks"),
        .testTarget(name: "WorkflowTests", dependencies: ["Workflow", "WorkflowTesting", "WorkflowExamples"]),
        .testTarget(name: "WorkflowTestingTests", dependencies: ["Workflow", "WorkflowTesting", "WorkflowExamples"]),
        // docs/GUIDE.md's code, compiled and run.
        .testTarget(name: "GuideTests", dependencies: ["Workflow", "WorkflowTesting", "WorkflowRemote"]),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ", "zmq-test-peer"]),
        .testTarget(name: "WireProtocolTests", dependencies: ["WireProtocol"]),
        .testTarget(
            name: "WorkflowRemoteTests",
            dependencies: [
                "WorkflowRemote", "RemoteTestSupport", "WorkflowExamples", "ZeroMQ", "WireProtocol", "remote-test-worker",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "WorkflowGatewayTests",
            dependencies: [
                "WorkflowGateway", "WorkflowCluster", "WorkflowRemote", "Workflow", "RemoteTestSupport", "EmailBrowserCluster",
                "WorkflowExamples", "workflow-coordinator", "workflow-worker",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSTesting", package: "hummingbird-websocket"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]),
        .testTarget(
            name: "WorkflowClusterTests",
            dependencies: [
                "WorkflowCluster", "WorkflowExamples", "Workflow", "RemoteTestSupport", "ZeroMQ", "WireProtocol", "workflow-coordinator",
                "workflow-worker", "zmq-test-peer", "durability-test-daemon",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
