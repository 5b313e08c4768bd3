import WorkflowCluster

/// `/workflow-client.js`: the JavaScript module a page uses to show a root's renderings and send
/// its events, served by every gateway so a page of an application's own needs no build step and
/// no copy of the protocol.
///
/// What it does for a page (docs/GUIDE.md, "A page of your own"):
/// - connects to the rendering stream and keeps the latest message: the rendering, its sequence
///   and each remote child's status (`running` on which worker, `starting`, `reconnecting`,
///   `unavailable` and why), so a page never polls `/api/tree`;
/// - reconnects by itself with exponential back-off and jitter when the connection drops or the
///   coordinator restarts, and reports `connecting`, `live` or `reconnecting` meanwhile;
/// - never shows an older rendering over a newer one of the same run;
/// - `send(sink, event)` posts an event and resolves with its outcome. When the sink is given as
///   a function of the rendering, a token a newer rendering replaced (410) is read again and the
///   event sent once more to the same place, as a person clicking again would.
enum ClientScript {
    /// Where it is served: the same path in every application.
    static let path = "/workflow-client.js"

    static let asset = WebAsset(path: path, contentType: "text/javascript; charset=utf-8", text: source)

    static let source = #"""
        // workflow-client.js: a client for a Workflow cluster's gateway (no build step).
        //
        //   import { connect } from "/workflow-client.js";
        //   const client = connect();                 // or connect({ bearerToken, base })
        //   client.subscribe(c => draw(c.rendering, c.children, c.state));
        //   const outcome = await client.send(r => r.inbox.onMessageSelected, 3);
        //   if (!outcome.ok) show(outcome.message);
        "use strict";

        export class WorkflowClient {
          constructor({ base = "", bearerToken = null, minimumDelay = 250, maximumDelay = 5000 } = {}) {
            this.base = base;
            this.bearerToken = bearerToken;
            this.minimumDelay = minimumDelay;
            this.maximumDelay = maximumDelay;
            this.state = "connecting";   // "connecting" | "live" | "reconnecting" | "closed"
            this.root = null;            // the root's name
            this.rendering = null;       // the latest rendering (JSON, sinks as tokens)
            this.sequence = 0;           // its number; never decreases within one run of the tree
            this.children = [];          // [{ path, type, status, worker, detail }] of the remote children
            this.connections = 0;        // how many times the stream was (re)connected
            this.listeners = new Set();
            this.socket = null;
            this.attempt = 0;
            this.timer = null;
          }

          // Calls `listener(client)` on every new rendering and change of state; returns a
          // function that stops it.
          subscribe(listener) {
            this.listeners.add(listener);
            if (this.rendering !== null) listener(this);
            return () => this.listeners.delete(listener);
          }

          start() {
            if (this.state === "closed" || this.socket) return this;
            const url = new URL(this.base + "/api/renderings", location.href);
            url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
            if (this.bearerToken) url.searchParams.set("access_token", this.bearerToken);
            const socket = new WebSocket(url);
            this.socket = socket;
            let first = true;
            socket.onmessage = event => {
              let message;
              try { message = JSON.parse(event.data); } catch { return; }
              // The first message of a connection is the tree as it is now, even if its number is
              // lower (a coordinator restarted without a store starts counting again).
              if (!this.accept(message, first)) return;
              first = false;
              this.attempt = 0;
              this.setState("live", false);
              this.notify();
            };
            socket.onclose = () => {
              if (this.socket !== socket) return;
              this.socket = null;
              if (this.state === "closed") return;
              this.setState("reconnecting");
              const ceiling = Math.min(this.maximumDelay, this.minimumDelay * 2 ** this.attempt);
              this.attempt += 1;
              this.timer = setTimeout(() => { this.timer = null; this.start(); }, ceiling / 2 + Math.random() * ceiling / 2);
            };
            this.connections += 1;
            return this;
          }

          close() {
            this.setState("closed");
            if (this.timer) clearTimeout(this.timer);
            const socket = this.socket;
            this.socket = null;
            if (socket) socket.close();
          }

          // Reads the latest rendering over HTTP (after a 410, or when a page wants it now).
          async refresh({ restarted = false } = {}) {
            const response = await fetch(this.base + "/api/rendering", { headers: this.headers() });
            if (!response.ok) throw new Error("GET /api/rendering answered " + response.status);
            if (this.accept(await response.json(), restarted)) this.notify();
          }

          // Sends `event` to a sink: `sink` is its token, or a function returning the token from a
          // rendering (then a 410 reads the rendering again and sends once more, to the new
          // token). Resolves with { ok, status, code, message, retryAfter } and never throws.
          async send(sink, event, { retried = false } = {}) {
            const token = typeof sink === "function" ? (this.rendering === null ? null : sink(this.rendering)) : sink;
            if (!token) return { ok: false, status: 0, code: "no-sink", message: "the rendering has no sink there now" };
            let response;
            try {
              response = await fetch(this.base + "/api/events/" + encodeURIComponent(token), {
                method: "POST", headers: { ...this.headers(), "Content-Type": "application/json" }, body: JSON.stringify(event ?? null) });
            } catch (error) {
              return { ok: false, status: 0, code: "unreachable", message: "the coordinator cannot be reached: " + error.message };
            }
            let body = {};
            try { body = await response.json(); } catch { /* an answer without JSON */ }
            const outcome = {
              ok: response.ok, status: response.status, code: body.error ?? body.result ?? String(response.status),
              message: body.message ?? "", retryAfter: Number(response.headers.get("Retry-After")) || null };
            if (response.status === 410) {
              try { await this.refresh({ restarted: body.error === "restarted" }); } catch { return outcome; }
              if (typeof sink === "function" && !retried) return this.send(sink, event, { retried: true });
            }
            return outcome;
          }

          // Private below.
          headers() { return this.bearerToken ? { Authorization: "Bearer " + this.bearerToken } : {}; }

          accept(message, regardlessOfSequence) {
            if (!message || typeof message.sequence !== "number") return false;
            if (!regardlessOfSequence && message.sequence <= this.sequence) return false;
            this.root = message.root;
            this.rendering = message.rendering;
            this.sequence = message.sequence;
            this.children = Array.isArray(message.children) ? message.children : [];
            return true;
          }

          setState(state, notify = true) {
            if (this.state === state || this.state === "closed") return;
            this.state = state;
            if (notify) this.notify();
          }

          notify() {
            for (const listener of this.listeners) {
              try { listener(this); } catch (error) { console.error(error); }
            }
          }
        }

        // A started client (see WorkflowClient's constructor for the options).
        export function connect(options = {}) {
          return new WorkflowClient(options).start();
        }
        """#
}
