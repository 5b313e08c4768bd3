import WorkflowCluster

/// `/inspector`: a page that draws `/api/tree` — the root, each remote child under it with
/// where it runs and its traffic, and the workers — refreshed every second.
///
/// Plain HTML and JavaScript in one asset, so the coordinator serves it with no build step and
/// it works for any application's root.
enum InspectorPage {
    static let asset = WebAsset(path: "/inspector", contentType: "text/html; charset=utf-8", text: html)

    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>Workflow cluster inspector</title>
        <style>
          body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1d2330; background: #f6f7f9; }
          h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 24px 0 8px; }
          .muted { color: #6b7280; } .error { color: #b91c1c; }
          .tree { list-style: none; padding-left: 0; } .tree ul { list-style: none; padding-left: 28px; border-left: 2px solid #cbd5e1; margin-left: 14px; }
          .node { display: inline-block; background: #fff; border: 1px solid #d1d5db; border-radius: 8px; padding: 8px 12px; margin: 6px 0; min-width: 420px; }
          .node .title { font-weight: 600; } .node .where { float: right; font-weight: 600; }
          .status-running { border-left: 6px solid #16a34a; } .status-starting { border-left: 6px solid #ca8a04; }
          .status-reconnecting { border-left: 6px solid #ca8a04; }
          .status-unavailable { border-left: 6px solid #dc2626; } .status-root { border-left: 6px solid #2563eb; }
          .status-local { border-left: 6px solid #64748b; } .tree ul:empty { display: none; }
          table { border-collapse: collapse; background: #fff; } th, td { border: 1px solid #d1d5db; padding: 6px 10px; text-align: left; }
          th, td { white-space: nowrap; } th { background: #eef2f7; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
          code { font-size: 12px; }
        </style>
        </head>
        <body>
        <h1>Workflow cluster inspector</h1>
        <div class="muted" id="summary">loading…</div>
        <h2>Tree</h2>
        <ul class="tree" id="tree"></ul>
        <h2>Workers</h2>
        <table id="workers"><thead><tr><th>name</th><th>pid @ host</th><th>pool</th><th>load / capacity</th><th>last heard</th><th>joined at</th><th>hosts</th></tr></thead><tbody></tbody></table>
        <div id="missing" class="error"></div>
        <h2>Sessions</h2>
        <table id="sessions"><thead><tr><th>session</th><th>root</th><th>state</th><th>clients</th><th>rendering</th></tr></thead><tbody></tbody></table>
        <script>
        "use strict";
        const token = new URLSearchParams(location.hash.slice(1)).get("token");
        const headers = token ? { Authorization: "Bearer " + token } : {};
        function el(tag, attrs, ...children) {
          const node = document.createElement(tag);
          for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
          for (const child of children) node.append(child);
          return node;
        }
        function drawNode(title, where, cls, lines) {
          const box = el("div", { class: "node " + cls, "data-path": title });
          box.append(el("span", { class: "where" }, where), el("div", { class: "title" }, title));
          for (const line of lines) box.append(el("div", { class: "muted" }, line));
          return box;
        }
        function draw(tree) {
          document.getElementById("summary").textContent =
            `root ${tree.root.name} · rendering #${tree.root.renderingSequence} (${tree.root.renderingBytes} B) · ` +
            `${tree.nodes.filter(n => n.events).length} remote children, ${tree.nodes.filter(n => !n.events).length} local · ${tree.workers.length} workers · updated ${new Date().toLocaleTimeString()}`;
          const rootItem = el("li", {});
          rootItem.append(drawNode(tree.root.name, `coordinator (pid ${tree.root.runsOn.pid}, ${tree.root.runsOn.host})`, "status-root",
            ["root workflow"]));
          // Nodes come in pre-order with their depth: each opens a list its children nest in.
          const lists = [el("ul", {})];
          for (const node of tree.nodes) {
            const where = !node.runsOn ? "nowhere"
              : node.runsOn.pid == null ? node.runsOn.process
              : `${node.runsOn.process} (pid ${node.runsOn.pid}, ${node.runsOn.host})`;
            const shortType = node.type.split(".").pop();
            const lines = [`${node.path}`, `${node.type} · placement ${node.placement}`,
              `${node.status}${node.detail ? ": " + node.detail : ""}`];
            if (node.epoch != null) {
              lines.push(`epoch ${node.epoch}${node.placedAt ? " · placed " + node.placedAt : ""}`);
            }
            if (node.events) {
              const rt = node.lastRoundTripMilliseconds == null ? "–" : node.lastRoundTripMilliseconds.toFixed(2) + " ms";
              lines.push(`props #${node.propsSequence} ${node.propsBytes} B · rendering ${node.renderingBytes ?? "–"} B · last round trip ${rt}`,
                `events sent ${node.events.sent} · acknowledged ${node.events.acknowledged} · outstanding ${node.events.outstanding}`);
            }
            const item = el("li", {}, drawNode(shortType + (node.key ? ` [${node.key}]` : ""), where,
              node.placement === "local" ? "status-local" : "status-" + node.status, lines));
            lists.length = Math.max(1, Math.min(node.depth, lists.length));
            lists[lists.length - 1].append(item);
            const nested = el("ul", {});
            item.append(nested);
            lists.push(nested);
          }
          rootItem.append(lists[0]);
          document.getElementById("tree").replaceChildren(rootItem);
          const body = document.querySelector("#workers tbody");
          body.replaceChildren(...tree.workers.map(w => el("tr", { "data-worker": w.name },
            el("td", {}, w.name), el("td", {}, w.pid == null ? "–" : `${w.pid} @ ${w.host}`), el("td", {}, w.pool), el("td", { class: "num" }, `${w.load} / ${w.capacity}`),
            el("td", { class: "num" }, `${w.lastHeardMillisecondsAgo.toFixed(0)} ms ago`), el("td", {}, w.joinedAt),
            el("td", {}, el("code", {}, w.hostedTypes.join(", "))))));
          document.getElementById("missing").textContent =
            tree.missingWorkers.length ? "configured but not connected: " + tree.missingWorkers.join(", ") : "";
          const sessions = tree.sessions || [];
          document.querySelector("#sessions tbody").replaceChildren(...sessions.map(s => el("tr", { "data-session": s.label },
            el("td", {}, el("code", {}, s.label + "…")), el("td", {}, s.root), el("td", {}, s.state),
            el("td", { class: "num" }, String(s.clients)), el("td", { class: "num" }, "#" + s.sequence))));
        }
        async function refresh() {
          try {
            const response = await fetch("/api/tree", { headers });
            if (!response.ok) throw new Error("HTTP " + response.status);
            draw(await response.json());
          } catch (error) {
            document.getElementById("summary").textContent = "cannot read /api/tree: " + error.message;
          }
          setTimeout(refresh, 1000);
        }
        refresh();
        </script>
        </body>
        </html>
        """#
}
