import WorkflowCluster

/// The order-fulfilment dashboard's page, served by the coordinator's gateway at `/`.
///
/// A page of an application's own on the gateway's client module (`/workflow-client.js`), in
/// one asset with no build step: it draws the intake's stock and each order's row from every
/// rendering, sends the intake's form and each step's button as events to the sinks of the
/// rendering on screen, and marks a step whose worker is away from the children's statuses the
/// rendering messages carry.
enum OrdersWebPage {
    /// The page, served at `/`.
    static var assets: [WebAsset] {
        [WebAsset(path: "/", contentType: "text/html; charset=utf-8", text: html)]
    }

    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>Order fulfilment — distributed workflow</title>
        <style>
          body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d2330; background: #eef1f5; }
          header { background: #24402f; color: #fff; padding: 12px 20px; display: flex; justify-content: space-between; }
          header h1 { font-size: 18px; margin: 0; } header span { font-size: 13px; color: #d2e4d8; }
          main { padding: 16px 20px; display: grid; gap: 16px; }
          section { background: #fff; border: 1px solid #d3d9e2; border-radius: 10px; padding: 12px 16px; }
          table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid #edf0f4; }
          .by { color: #2563eb; font-size: 13px; } .away { color: #b91c1c; } #rejection { color: #b91c1c; }
        </style>
        </head>
        <body>
        <header><h1>Order fulfilment</h1><span><span id="connection">connecting…</span><span id="send-outcome"></span></span></header>
        <main>
          <section id="intake">
            <h2>Intake <span class="by" id="intake-by"></span></h2>
            <form id="order-form">
              <select id="sku"></select> <input id="quantity" type="number" min="1" value="1"> <button>Place order</button>
              <span id="rejection"></span>
            </form>
            <table><thead><tr><th>item</th><th>available</th></tr></thead><tbody id="stock"></tbody></table>
          </section>
          <section>
            <h2>Orders</h2>
            <table><thead><tr><th>order</th><th>item</th><th>stage</th><th>step</th></tr></thead><tbody id="orders"></tbody></table>
          </section>
        </main>
        <script type="module">
        import { connect } from "/workflow-client.js";
        const client = connect({ bearerToken: new URLSearchParams(location.hash.slice(1)).get("token") });
        window.workflowClient = client;
        const $ = id => document.getElementById(id);
        const cell = text => { const td = document.createElement("td"); td.textContent = text; return td; };

        // Where a step runs: its remote child's status, by the order's key in the child's path.
        function step(type, orderID) {
          const child = client.children.find(c => c.type.endsWith(type) && c.path.endsWith("[" + orderID + "]"));
          return child && child.status !== "running" ? " (" + child.status + ")" : "";
        }

        // An event's outcome has a place of its own, so the connection's state stays readable; one
        // the coordinator could not confirm (the connection went mid-way) may still have applied.
        async function send(sink, event) {
          const outcome = await client.send(sink, event);
          $("send-outcome").textContent = outcome.ok ? ""
            : outcome.status === 0 ? " · not confirmed: " + outcome.message : " · refused: " + outcome.message;
        }

        client.subscribe(() => {
          $("connection").textContent = { connecting: "connecting…", live: "live", reconnecting: "reconnecting…", closed: "closed" }[client.state];
          const screen = client.rendering;
          if (screen === null) return;
          document.body.dataset.sequence = client.sequence;
          $("intake-by").textContent = "rendered by " + screen.intake.renderedBy + step("OrderIntakeWorkflow", "intake");
          $("rejection").textContent = screen.intake.lastRejection || "";
          const chosen = $("sku").value;
          $("sku").replaceChildren(...screen.intake.stock.map(line => new Option(line.sku, line.sku, false, line.sku === chosen)));
          $("stock").replaceChildren(...screen.intake.stock.map(line => {
            const row = document.createElement("tr");
            row.append(cell(line.sku), cell(line.available));
            return row;
          }));
          $("orders").replaceChildren(...screen.orders.map(({ order, stage, tracking, packing, shipping }) => {
            const row = document.createElement("tr");
            row.dataset.order = order.id;
            row.dataset.stage = stage;
            const action = document.createElement("td");
            const pane = packing || shipping;
            if (pane) {
              const type = packing ? "PackingWorkflow" : "ShippingWorkflow";
              const button = document.createElement("button");
              button.textContent = packing ? "hand over" : "confirm delivery";
              button.disabled = !(packing ? packing.handOver : shipping.confirmDelivery);
              button.addEventListener("click", () =>
                send(rendering => {
                  const current = rendering.orders.find(line => line.order.id === order.id);
                  return current && (packing ? current.packing?.handOver : current.shipping?.confirmDelivery);
                }, {}));
              const by = document.createElement("span");
              by.className = "by";
              by.textContent = " by " + pane.renderedBy + step(type, order.id);
              action.append(button, by);
            } else {
              action.textContent = tracking ? "tracking " + tracking : "";
            }
            row.append(cell(order.id), cell(order.quantity + " × " + order.sku), cell(stage), action);
            return row;
          }));
        });

        $("order-form").addEventListener("submit", event => {
          event.preventDefault();
          send(rendering => rendering.intake.placeOrder, { sku: $("sku").value, quantity: Number($("quantity").value) });
        });
        </script>
        </body>
        </html>
        """#
}
