// swift-tools-version: 6.1
import PackageDescription

// An order-fulfilment dashboard run as a workflow cluster: a second application, built the way
// a user's would be, depending on the distributed-workflow package by path.
//
//   OrderFulfilment      the workflows (a dashboard root; intake, packing and shipping run remotely)
//   orders-coordinator   the coordinator: the library's entry point with this app's root
//   orders-worker        the worker: the library's entry point with this app's remotable types
let package = Package(
    name: "OrderFulfilment",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Named, so the products below resolve whatever the checkout's directory is called.
        .package(name: "DistributedWorkflow", path: "../..")
    ],
    targets: [
        .target(
            name: "OrderFulfilment",
            dependencies: [
                .product(name: "Workflow", package: "DistributedWorkflow"),
                .product(name: "WorkflowRemote", package: "DistributedWorkflow"),
            ]),
        .executableTarget(
            name: "orders-coordinator",
            dependencies: [
                "OrderFulfilment",
                .product(name: "WorkflowCluster", package: "DistributedWorkflow"),
                .product(name: "WorkflowClusterCommands", package: "DistributedWorkflow"),
            ]),
        .executableTarget(
            name: "orders-worker",
            dependencies: [
                "OrderFulfilment",
                .product(name: "WorkflowRemote", package: "DistributedWorkflow"),
                .product(name: "WorkflowClusterCommands", package: "DistributedWorkflow"),
            ]),
        .testTarget(
            name: "OrderFulfilmentTests",
            dependencies: [
                "OrderFulfilment", "orders-coordinator", "orders-worker",
                .product(name: "WorkflowClusterTesting", package: "DistributedWorkflow"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
