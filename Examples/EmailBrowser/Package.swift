// swift-tools-version: 6.1
import PackageDescription

// The seeds' email browser run as a workflow cluster: the application `scripts/demo.sh` and
// `scripts/cluster.sh` run, built the way a user's would be, depending on the distributed-workflow
// package by path.
//
//   EmailBrowser          the workflows: the split browser, its inbox and message panes
//   EmailBrowserCluster   the cluster application: its root, worker types, printed frames, scripted
//                         demo and web page
//   workflow-coordinator  the coordinator: the library's entry point with the browser's root and page
//   workflow-worker       the worker: the library's entry point with the browser's panes
let package = Package(
    name: "EmailBrowser",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Named, so the products below resolve whatever the checkout's directory is called.
        .package(name: "DistributedWorkflow", path: "../.."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.0"),
    ],
    targets: [
        .target(
            name: "EmailBrowser",
            dependencies: [
                .product(name: "Workflow", package: "DistributedWorkflow"),
                .product(name: "WorkflowRemote", package: "DistributedWorkflow"),
            ]),
        .target(
            name: "EmailBrowserCluster",
            dependencies: [
                "EmailBrowser",
                .product(name: "WorkflowCluster", package: "DistributedWorkflow"),
                .product(name: "WorkflowClusterCommands", package: "DistributedWorkflow"),
                .product(name: "WorkflowRemote", package: "DistributedWorkflow"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(
            name: "workflow-coordinator",
            dependencies: ["EmailBrowserCluster", .product(name: "WorkflowClusterCommands", package: "DistributedWorkflow")]),
        .executableTarget(
            name: "workflow-worker",
            dependencies: ["EmailBrowserCluster", .product(name: "WorkflowClusterCommands", package: "DistributedWorkflow")]),
        .testTarget(
            name: "EmailBrowserTests",
            dependencies: [
                "EmailBrowser", "workflow-coordinator", "workflow-worker",
                .product(name: "Workflow", package: "DistributedWorkflow"),
                .product(name: "WorkflowTesting", package: "DistributedWorkflow"),
                .product(name: "WorkflowClusterTesting", package: "DistributedWorkflow"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
