// swift-tools-version: 6.1
import PackageDescription

// Modules, bottom to top (each depends only downward):
//   Workflow            core runtime (no I/O)
//   WorkflowTesting     render/action testers over Swift Testing
//   CZeroMQ / ZeroMQ    the system libzmq and the project's thin, safe binding
//   CSQLite             the system libsqlite3, for the coordinator's embedded store (its binding: WorkflowCluster/Store/SQLite)
//   WireProtocol        envelope + Codable wire codecs (no sockets; `package` API, no product)
//   WorkflowRemote      remote children: proxies, worker hosting, the socket-owning loop
//   WorkflowCluster     the daemons' logic: configuration, coordinator, worker, generic JSON root
//   WorkflowGateway     the coordinator's HTTP side: renderings, events, inspector, metrics, health
//   WorkflowClusterCommands  the daemons' command lines as entry points an application's @main calls
//   WorkflowClusterTesting   test support for cluster applications: daemons as processes, their lines
//
// The example applications are packages of their own under Examples/ (the email browser, order
// fulfilment), depending on this one by path as a user's application does.
let package = Package(
    name: "DistributedWorkflow",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Workflow", targets: ["Workflow"]),
        .library(name: "WorkflowTesting", targets: ["WorkflowTesting"]),
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "WorkflowRemote", targets: ["WorkflowRemote"]),
        .library(name: "WorkflowCluster", targets: ["WorkflowCluster"]),
        .library(name: "WorkflowGateway", targets: ["WorkflowGateway"]),
        .library(name: "WorkflowClusterCommands", targets: ["WorkflowClusterCommands"]),
        .library(name: "WorkflowClusterTesting", targets: ["WorkflowClusterTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
        // The coordinator's shared store, for coordinators on several machines (PostgreSQL).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        // Spans for one event across processes (issue 39): the API everywhere, the exporter only in
        // the daemons' commands, over OTLP/HTTP alone (no gRPC built).
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.1.0"),
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.0.0", traits: ["OTLPHTTP"]),
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
        // libsqlite3 from Debian's libsqlite3-dev, for the coordinator's embedded store: the
        // store keeps its statements prepared, which no Swift SQLite package here offers
        // without more than the store needs.
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // A tiny peer process the ZeroMQ tests spawn to prove traffic crosses processes, and the
        // cluster tests spawn to flood a coordinator.
        .executableTarget(name: "zmq-test-peer", dependencies: ["ZeroMQ", "WireProtocol"], path: "Tests/Helpers/zmq-test-peer"),
        .target(name: "WireProtocol"),
        .target(
            name: "WorkflowRemote",
            dependencies: [
                "Workflow", "ZeroMQ", "WireProtocol", .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]),
        // The cluster daemons' logic (configuration, coordinator, worker, logging, the generic
        // JSON root), testable; knows no example.
        .target(
            name: "WorkflowCluster",
            dependencies: [
                "Workflow", "WorkflowRemote", "ZeroMQ", "CSQLite",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]),
        // The coordinator's HTTP side (Hummingbird): the root's renderings and events for clients,
        // the tree inspector, Prometheus metrics and health probes; generic over the root.
        .target(
            name: "WorkflowGateway",
            dependencies: [
                "WorkflowCluster", "WorkflowRemote",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
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
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
            ]),
        // Test support for cluster applications (this package's tests and the examples'): start
        // daemons as processes, wait on the lines they print, stop them all. Foundation only.
        .target(name: "WorkflowClusterTesting"),
        // The tests' own workflows (counters, lists, the list-detail root the daemon tests host).
        .target(name: "RemoteTestSupport", dependencies: ["Workflow", "WorkflowRemote"], path: "Tests/Helpers/RemoteTestSupport"),
        // A bare worker process for the remote-runtime tests (no configuration file).
        .executableTarget(
            name: "remote-test-worker", dependencies: ["RemoteTestSupport", "WorkflowRemote"], path: "Tests/Helpers/remote-test-worker"),
        // The daemon tests' coordinator and worker: the library's commands hosting the test workflows.
        .executableTarget(
            name: "test-coordinator",
            dependencies: [
                "RemoteTestSupport", "WorkflowCluster", "WorkflowClusterCommands", "WorkflowClusterTesting", "WorkflowRemote",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/Helpers/test-coordinator"),
        .executableTarget(
            name: "test-worker", dependencies: ["RemoteTestSupport", "WorkflowClusterCommands", "WorkflowClusterTesting", "WorkflowRemote"],
            path: "Tests/Helpers/test-worker"),
        // What the daemon tests share: a cluster of test daemons on a private endpoint, the lines
        // they print, a client of the gateway.
        .target(
            name: "ClusterTestSupport",
            dependencies: [
                "WorkflowCluster", "WorkflowClusterTesting", .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Helpers/ClusterTestSupport"),
        // The durability tests' coordinator and worker (one binary): they record every event's id, so
        // the tests see how often each accepted event took effect across coordinator SIGKILLs.
        .executableTarget(
            name: "durability-test-daemon",
            dependencies: [
                "ClusterTestSupport", "RemoteTestSupport", "Workflow", "WorkflowCluster", "WorkflowClusterCommands", "WorkflowClusterTesting", "WorkflowRemote",
            ],
            path: "Tests/Helpers/durability-test-daemon"),
        // The benchmark suite (scripts/bench.sh): every figure beside its baseline, one table.
        .executableTarget(
            name: "workflow-bench",
            dependencies: ["Workflow", "WorkflowRemote", "RemoteTestSupport", "ZeroMQ", "WireProtocol"],
            path: "Benchmarks/WorkflowBenchmarks"),
        // The sessions benchmark (scripts/bench-sessions.sh): its coordinator, workers and load.
        .executableTarget(
            name: "session-bench",
            dependencies: [
                "RemoteTestSupport", "WorkflowCluster", "WorkflowClusterCommands", "WorkflowClusterTesting", "WorkflowGateway", "WorkflowRemote",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/SessionBench"),
        .testTarget(name: "WorkflowTests", dependencies: ["Workflow", "WorkflowTesting"]),
        .testTarget(name: "WorkflowTestingTests", dependencies: ["Workflow", "WorkflowTesting"]),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ", "WorkflowClusterTesting", "zmq-test-peer"]),
        .testTarget(name: "WireProtocolTests", dependencies: ["WireProtocol"]),
        .testTarget(
            name: "WorkflowRemoteTests",
            dependencies: [
                "WorkflowRemote", "RemoteTestSupport", "WorkflowClusterTesting", "ZeroMQ", "WireProtocol", "remote-test-worker",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]),
        .testTarget(
            name: "WorkflowGatewayTests",
            dependencies: [
                "WorkflowGateway", "WorkflowCluster", "WorkflowRemote", "Workflow", "RemoteTestSupport", "WorkflowClusterTesting",
                "ClusterTestSupport", "test-coordinator", "test-worker",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSTesting", package: "hummingbird-websocket"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]),
        // WorkflowCluster in process: configuration, the root session, the coordinator service.
        .testTarget(
            name: "WorkflowClusterTests",
            dependencies: [
                "WorkflowCluster", "Workflow", "WorkflowRemote", "RemoteTestSupport", "WorkflowClusterTesting", "ClusterTestSupport",
                // A second session on the private server, holding locks the store must not wait on forever;
                // its databases written raw, as an earlier version left them (migration).
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]),
        // The daemons the commands make, as real processes (Daemons/), the scenario suites that
        // run them under load and faults (Scenarios/Flood, Scenarios/NetworkLab), and
        // docs/GUIDE.md's code, compiled and run (Guide/).
        .testTarget(
            name: "WorkflowClusterCommandsTests",
            dependencies: [
                "WorkflowCluster", "WorkflowClusterCommands", "WorkflowRemote", "WorkflowTesting", "Workflow", "RemoteTestSupport", "WorkflowClusterTesting", "ClusterTestSupport", "ZeroMQ", "WireProtocol",
                "test-coordinator", "test-worker", "zmq-test-peer", "durability-test-daemon",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
