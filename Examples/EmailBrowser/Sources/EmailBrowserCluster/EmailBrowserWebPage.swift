import WorkflowCluster

/// The email browser's web client: the page the coordinator's gateway serves at `/`.
///
/// Plain HTML and JavaScript (no build step) on the gateway's client module
/// (`/workflow-client.js`). Each tab browses in a session of its own (a tree of its own on the
/// coordinator, resumed after a reload); `#shared` in the address shows the coordinator's shared
/// root instead. It draws the inbox and the message pane from each rendering, labels
/// each pane with the process that rendered it, sends a click as an event to the inbox's
/// `onMessageSelected` sink, and shows a pane whose worker is gone as unavailable (from the
/// children's statuses each rendering message carries) until it comes back. A click not yet
/// shown by a rendering (`client.pending`) is marked as waiting. It belongs to the
/// email browser, not to the gateway, which serves any application's assets.
public enum EmailBrowserWebPage {
    /// The page, served at `/`.
    public static var assets: [WebAsset] {
        [WebAsset(path: "/", contentType: "text/html; charset=utf-8", text: html)]
    }

    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>Email browser — distributed workflow</title>
        <style>
          body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d2330; background: #eef1f5; }
          header { background: #1f2a44; color: #fff; padding: 12px 20px; display: flex; justify-content: space-between; align-items: baseline; }
          header h1 { font-size: 18px; margin: 0; } header a { color: #bcd0ff; } header span { font-size: 13px; color: #c7cfdd; }
          main { display: grid; grid-template-columns: 340px 1fr; gap: 16px; padding: 16px 20px; }
          section { background: #fff; border: 1px solid #d3d9e2; border-radius: 10px; overflow: hidden; }
          section h2 { margin: 0; padding: 10px 14px; font-size: 14px; background: #f5f7fa; border-bottom: 1px solid #d3d9e2;
                       display: flex; justify-content: space-between; }
          .by { font-weight: 500; color: #2563eb; } .by.unavailable { color: #b91c1c; }
          ul { list-style: none; margin: 0; padding: 0; }
          li button { width: 100%; text-align: left; border: 0; border-bottom: 1px solid #edf0f4; background: none; padding: 10px 14px;
                      font: inherit; cursor: pointer; } li button:hover { background: #f2f6ff; }
          li button.selected { background: #dbe7ff; font-weight: 600; }
          li button.pending { color: #6b7280; } li button.pending::after { content: " · waiting…"; font-size: 12px; }
          #message-body { padding: 14px 18px; white-space: pre-wrap; } #message-subject { font-size: 20px; margin: 0 0 8px; }
          .note { color: #6b7280; } .banner { padding: 8px 14px; background: #fee2e2; color: #991b1b; display: none; }
          section.down .banner { display: block; } section.down { border-color: #f87171; }
        </style>
        </head>
        <body>
        <header><h1>Email browser</h1><span><span id="session"></span> · <span id="connection">connecting…</span><span id="pending"></span><span id="click-outcome"></span></span><a href="/inspector" id="inspector-link">inspector</a></header>
        <main>
          <section id="inbox-pane">
            <h2>Inbox <span class="by" id="inbox-by">–</span></h2>
            <div class="banner" id="inbox-banner"></div>
            <ul id="inbox-list"></ul>
          </section>
          <section id="message-pane">
            <h2>Message <span class="by" id="message-by">–</span></h2>
            <div class="banner" id="message-banner"></div>
            <div id="message-body"><p class="note">Select a message.</p></div>
          </section>
        </main>
        <script type="module">
        import { connect } from "/workflow-client.js";
        // Each tab browses in a session of its own (resumed after a reload); `#shared` shows the
        // coordinator's shared root instead (the one the demo drives).
        const hash = new URLSearchParams(location.hash.slice(1));
        const bearerToken = hash.get("token");
        const client = connect({ bearerToken, session: hash.has("shared") ? null : { root: "email-browser" } });
        window.workflowClient = client;   // for the browser test and the console
        const $ = id => document.getElementById(id);
        const connectionWords = { connecting: "connecting…", live: "live", reconnecting: "reconnecting…", closed: "closed" };
        const paneTypes = { inbox: "InboxWorkflow", message: "MessageWorkflow" };

        // The pane's remote child as the latest message reports it (a pane rendered locally has none).
        function paneStatus(pane) {
          return client.children.find(child => child.type.endsWith(paneTypes[pane])) || { status: "running", detail: "" };
        }

        function draw() {
          // "failed": the session could not be followed to its coordinator (the client says why).
          $("connection").textContent = client.state === "failed" ? "failed: " + client.error.message : connectionWords[client.state];
          $("session").textContent = client.sessionID ? "session " + client.sessionID.slice(0, 8) : "shared";
          document.body.dataset.session = client.sessionID || "";
          // Clicks sent and not yet shown by a rendering (waiting for the coordinator, or for a
          // worker to run the inbox): marked, so a click never looks ignored.
          const waiting = new Set(client.pending.map(entry => entry.event));
          $("pending").textContent = waiting.size ? " · " + waiting.size + (waiting.size === 1 ? " click" : " clicks") + " waiting" : "";
          if (client.rendering === null) return;
          const screen = client.rendering;
          document.body.dataset.sequence = client.sequence;
          for (const [pane, by] of [["inbox", screen.inbox.renderedBy], ["message", screen.message.renderedBy]]) {
            const status = paneStatus(pane);
            const down = status.status === "unavailable" || by === "(unavailable)";
            const waiting = !down && status.status !== "running";
            $(pane + "-pane").classList.toggle("down", down);
            $(pane + "-by").textContent = down ? "unavailable" : "rendered by " + by + (waiting ? " (" + status.status + ")" : "");
            $(pane + "-by").classList.toggle("unavailable", down);
            $(pane + "-banner").textContent = down
              ? "unavailable" + (status.detail ? ": " + status.detail : "") + " — it comes back by itself when its worker does" : "";
          }
          const list = $("inbox-list");
          list.replaceChildren(...screen.inbox.messages.map(row => {
            const button = document.createElement("button");
            button.textContent = row.subject;
            button.dataset.id = row.id;
            button.classList.toggle("selected", row.id === screen.message.messageID);
            button.classList.toggle("pending", waiting.has(row.id));
            button.addEventListener("click", () => select(row.id));
            const item = document.createElement("li");
            item.append(button);
            return item;
          }));
          const body = $("message-body");
          if (screen.message.messageID == null) {
            body.innerHTML = '<p class="note">Select a message.</p>';
          } else {
            const subject = document.createElement("h3");
            subject.id = "message-subject";
            subject.textContent = screen.message.subject;
            const text = document.createElement("div");
            text.id = "message-text";
            text.textContent = screen.message.body;
            body.replaceChildren(subject, text);
            body.dataset.messageId = screen.message.messageID;
          }
        }

        // A click is an event to the inbox's sink in the rendering on screen; the client sends it
        // again to the newest rendering's sink if a newer rendering replaced that one. A click the
        // coordinator refused says why; one it could not confirm (the connection went mid-way) may
        // still have been applied, and the page shows the tree as it is once it reconnects. The
        // outcome has its own place, so the connection's state stays readable.
        async function select(id) {
          const outcome = await client.send(screen => screen.inbox.onMessageSelected, id);
          $("click-outcome").textContent = outcome.ok ? ""
            : outcome.status === 0 ? " · click not confirmed: " + outcome.message : " · click refused: " + outcome.message;
        }

        if (bearerToken) $("inspector-link").href = "/inspector#token=" + encodeURIComponent(bearerToken);
        client.subscribe(draw);
        </script>
        </body>
        </html>
        """#
}
