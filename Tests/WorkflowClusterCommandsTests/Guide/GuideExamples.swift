// The code of docs/GUIDE.md, compiled and run by GuideTests so the guide cannot rot. Each block
// between `GUIDE-BEGIN name` and `GUIDE-END` appears verbatim in the guide as a ```swift block;
// `GuideTextTests` checks that every such block of the guide is one of these.

import Foundation
import Testing

// GUIDE-BEGIN room
import Workflow
import WorkflowRemote

/// One chat room. Its messages are its private state; posting one reports it to the parent.
struct RoomWorkflow: RemotableWorkflow {
    /// The room's name: the props, set by the parent on every render.
    var name: String

    struct State: Codable, Equatable, Sendable {
        var messages: [String] = []
    }

    /// What the room tells its parent.
    struct Posted: Codable, Equatable, Sendable {
        var room: String
    }
    typealias Output = Posted

    /// What the room shows, and the one thing you can do in it.
    struct Rendering: Codable, Sendable {
        var name: String
        var messages: [String]
        var onPost: Sink<String>
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<RoomWorkflow>) -> Rendering {
        let onPost = context.makeSink(of: String.self) { text in
            AnyWorkflowAction<RoomWorkflow> { state, context in
                state.messages.append(text)
                return Posted(room: context[workflowValue: \.name])
            }
        }
        return Rendering(name: name, messages: state.messages, onPost: onPost)
    }

    /// What a parent shows for this room while its worker has not rendered it yet.
    func placeholderRendering() -> Rendering {
        Rendering(name: name, messages: [], onPost: .inert)
    }
}
// GUIDE-END

// GUIDE-BEGIN host
/// Starts a room, posts twice (a sink may be called from any thread or task), and returns
/// the messages once a rendering shows both.
func postTwice() async -> [String] {
    let host = WorkflowHost(workflow: RoomWorkflow(name: "general"))  // renders once first
    host.rendering.onPost.send("hello")
    host.rendering.onPost.send("is anyone here?")
    var messages: [String] = []
    for await room in host.renderings where room.messages.count == 2 {
        messages = room.messages
        break
    }
    await host.stop()
    return messages
}
// GUIDE-END

// GUIDE-BEGIN rename
/// Renames the room and answers with the name the room now shows: the first rendering after
/// the loop applied the new props, handed straight to this task.
func rename(_ host: WorkflowHost<RoomWorkflow>, to name: String) async -> String? {
    await host.updateAndAwaitRendering(workflow: RoomWorkflow(name: name))?.name  // nil: host stopped
}
// GUIDE-END

// GUIDE-BEGIN lobby
/// The lobby: one room per name, and how many messages were posted in all of them.
struct LobbyWorkflow: Workflow, Sendable {
    var roomNames: [String]
    /// Where the rooms run. `.local` renders each room right here, exactly as if it had not
    /// been marked remotable.
    var placement: RemotePlacement = .local

    struct State: Codable, Equatable, Sendable {
        var totalPosts = 0
    }

    struct Rendering: Sendable {
        var rooms: [RoomWorkflow.Rendering]
        var totalPosts: Int
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<LobbyWorkflow>) -> Rendering {
        let rooms = roomNames.map { name in
            RoomWorkflow(name: name)
                .remote(on: placement)
                .rendered(in: context, key: name) { state, _ in
                    state.totalPosts += 1
                    return nil
                }
        }
        return Rendering(rooms: rooms, totalPosts: state.totalPosts)
    }
}
// GUIDE-END

// GUIDE-BEGIN render-test
import WorkflowTesting

@Test func aPostInAnyRoomCountsInTheLobby() {
    LobbyWorkflow(roomNames: ["general", "random"])
        .renderTester()
        .expectWorkflow(
            type: RoomWorkflow.self, key: "general",
            producingRendering: RoomWorkflow(name: "general").placeholderRendering())
        .expectWorkflow(
            type: RoomWorkflow.self, key: "random",
            producingRendering: RoomWorkflow(name: "random").placeholderRendering(),
            producingOutput: RoomWorkflow.Posted(room: "random"))
        .render { lobby in
            #expect(lobby.rooms.map(\.name) == ["general", "random"])
        }
        .assert(state: LobbyWorkflow.State(totalPosts: 1))
}
// GUIDE-END

// GUIDE-BEGIN two-runtimes
/// A parent and a worker, each a `RemoteRuntime`: here in one process over an ipc endpoint,
/// in production in two processes (or machines) over tcp. Posts once in a room that runs on
/// the worker and returns the lobby's count of posts.
func postInARemoteRoom(endpoint: String) async throws -> Int {
    var parentConfiguration = RemoteRuntimeConfiguration(name: "lobby")
    parentConfiguration.listenEndpoint = endpoint
    let parent = try RemoteRuntime(configuration: parentConfiguration)

    var workerConfiguration = RemoteRuntimeConfiguration(name: "worker-1")
    workerConfiguration.parentEndpoint = endpoint
    workerConfiguration.registry = RemotableRegistry().registering(RoomWorkflow.self)
    let worker = try RemoteRuntime(configuration: workerConfiguration)
    await parent.waitForWorkers(count: 1)

    let lobby = LobbyWorkflow(roomNames: ["general"], placement: .anyWorker)
    let host = WorkflowHost(workflow: lobby, loop: parent)
    // The first rendering already holds the worker's rendering of the room (the host waits for
    // remote children before it publishes), so this sink calls into the worker's process.
    host.rendering.rooms[0].onPost.send("hello from the parent")
    var totalPosts = 0
    for await rendering in host.renderings where rendering.totalPosts == 1 {
        totalPosts = rendering.totalPosts
        break
    }
    await host.stop()
    await worker.shutdown()
    await parent.shutdown()
    return totalPosts
}
// GUIDE-END

// GUIDE-BEGIN same-frames
/// Runs the lobby with its rooms at `placement` (on `loop`, or the host's own thread), posts
/// `posts` messages, and returns every published rendering as (messages in the room, posts
/// the lobby counted) until the lobby has counted them all.
func frames(placement: RemotePlacement, loop: (any RuntimeLoop)?, posts: Int) async -> [(messages: Int, counted: Int)] {
    let lobby = LobbyWorkflow(roomNames: ["general"], placement: placement)
    let host = loop.map { WorkflowHost(workflow: lobby, loop: $0) } ?? WorkflowHost(workflow: lobby)
    let renderings = host.renderings
    let onPost = host.rendering.rooms[0].onPost
    for post in 1...posts { onPost.send("message \(post)") }
    var frames: [(messages: Int, counted: Int)] = []
    for await rendering in renderings {
        frames.append((rendering.rooms[0].messages.count, rendering.totalPosts))
        if rendering.totalPosts == posts { break }
    }
    await host.stop()
    return frames
}
// GUIDE-END

// GUIDE-BEGIN worker
/// Loads a room's history when the room is opened: asynchronous work as a `Worker`.
struct HistoryLoader: Worker, Equatable {
    typealias Output = [String]
    var room: String

    func run() async -> [String] {
        // A real loader reads a database or calls a service here; cancellation ends it.
        ["welcome to #\(room)"]
    }
}

/// Shows a room's history once it is loaded. The loader runs while a render declares it (an
/// equal loader in the next render keeps running; one no longer declared is cancelled), and
/// its result arrives as an action.
struct HistoryWorkflow: Workflow, Sendable {
    var room: String

    struct State: Sendable {
        var history: [String]?
    }

    func makeInitialState() -> State { State(history: nil) }

    func render(state: State, context: RenderContext<HistoryWorkflow>) -> [String] {
        guard let history = state.history else {
            HistoryLoader(room: room).running(in: context) { loaded in
                AnyWorkflowAction<HistoryWorkflow> { state, _ in
                    state.history = loaded
                    return nil
                }
            }
            return ["loading…"]
        }
        return history
    }
}
// GUIDE-END

// GUIDE-BEGIN page
import WorkflowCluster

/// The orders dashboard's page, served at `/` by the coordinator's gateway; an application
/// passes its assets as `WorkflowCoordinatorCommand.main(roots:webAssets:)`.
let dashboardPage = WebAsset(
    path: "/", contentType: "text/html; charset=utf-8",
    text: """
        <!doctype html>
        <title>Orders</title>
        <p id="connection">connecting…</p>
        <button id="order">Order a widget</button>
        <pre id="rendering"></pre>
        <script type="module">
          import { connect } from "/workflow-client.js";
          const client = connect();
          client.subscribe(({ state, rendering, sequence, children }) => {
            document.getElementById("connection").textContent = state;
            document.getElementById("rendering").textContent = `#${sequence}\\n` + JSON.stringify({ rendering, children }, null, 2);
          });
          document.getElementById("order").onclick = async () => {
            const outcome = await client.send(screen => screen.intake.placeOrder, { sku: "widget", quantity: 1 });
            if (!outcome.ok) alert(outcome.message);
          };
        </script>
        """)
// GUIDE-END
