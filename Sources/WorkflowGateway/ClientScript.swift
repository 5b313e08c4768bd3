import WorkflowCluster

/// `/workflow-client.js`: the JavaScript module a page uses to show a root's renderings and send
/// its events, served by every gateway so a page of an application's own needs no build step and
/// no copy of the protocol.
///
/// What it does for a page (docs/GUIDE.md, "A page of your own"):
/// - with `session`, works on a tree of the page's own (a session): creates one, remembers its
///   id for the tab (`sessionStorage`), and resumes it after a reload or a reconnection; a
///   session that no longer exists is replaced by a new one;
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
        //   const client = connect();                 // the shared root; or connect({ bearerToken, base })
        //   const mine = connect({ session: { root: "email-browser" } });   // a tree of this tab's own
        //   client.subscribe(c => draw(c.rendering, c.children, c.state));
        //   const outcome = await client.send(r => r.inbox.onMessageSelected, 3);
        //   if (!outcome.ok) show(outcome.message);
        "use strict";

        export class WorkflowClient {
          constructor({ base = "", bearerToken = null, session = null, minimumDelay = 250, maximumDelay = 5000 } = {}) {
            this.base = base;
            this.bearerToken = bearerToken;
            this.session = session;      // null: the shared root; else { root, props, id }
            this.sessionID = session && session.id ? session.id : null;
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
            this.opening = false;
          }

          // Calls `listener(client)` on every new rendering and change of state; returns a
          // function that stops it.
          subscribe(listener) {
            this.listeners.add(listener);
            if (this.rendering !== null) listener(this);
            return () => this.listeners.delete(listener);
          }

          start() {
            if (this.state === "closed" || this.socket || this.opening) return this;
            this.opening = true;
            this.open().finally(() => { this.opening = false; });
            return this;
          }

          // Ends this client's session on the coordinator (its tree stops) and closes the client.
          async endSession() {
            const id = this.sessionID;
            this.close();
            if (!id) return;
            this.forget();
            await fetch(this.base + "/api/sessions/" + id, { method: "DELETE", headers: this.headers() }).catch(() => {});
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
            const response = await fetch(this.base + this.path("/rendering"), { headers: this.headers() });
            if (!response.ok) throw new Error("GET rendering answered " + response.status);
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
              response = await fetch(this.base + this.path("/events/" + encodeURIComponent(token)), {
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
          async open() {
            if (this.session) {
              try { await this.ensureSession(); } catch { return this.retry(); }
            }
            const url = new URL(this.base + this.path("/renderings"), location.href);
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
              this.retry();
            };
            this.connections += 1;
          }

          // Reconnects after a back-off with jitter, doubling up to `maximumDelay`.
          retry() {
            if (this.state === "closed") return;
            this.setState("reconnecting");
            const ceiling = Math.min(this.maximumDelay, this.minimumDelay * 2 ** this.attempt);
            this.attempt += 1;
            this.timer = setTimeout(() => { this.timer = null; this.start(); }, ceiling / 2 + Math.random() * ceiling / 2);
          }

          // Makes sure `sessionID` names a live session: the one this tab remembers if it still
          // exists, else a new one. Throws (and the caller retries) when the coordinator cannot say.
          async ensureSession() {
            if (!this.sessionID) this.sessionID = this.remembered();
            if (this.sessionID) {
              const response = await fetch(this.base + this.path("/rendering"), { headers: this.headers() });
              if (response.ok) return;
              if (response.status !== 404) throw new Error("GET rendering answered " + response.status);
              this.forget();
              this.sessionID = null;
            }
            const response = await fetch(this.base + "/api/sessions", {
              method: "POST", headers: { ...this.headers(), "Content-Type": "application/json" },
              body: JSON.stringify({ root: this.session.root, props: this.session.props }) });
            if (response.status !== 201) throw new Error("POST /api/sessions answered " + response.status);
            this.sessionID = (await response.json()).session;
            this.sequence = 0;
            try { sessionStorage.setItem(this.storageKey(), this.sessionID); } catch { /* storage off: not remembered */ }
          }

          storageKey() { return "workflow-session:" + this.base + ":" + (this.session.root || ""); }
          remembered() { try { return sessionStorage.getItem(this.storageKey()); } catch { return null; } }
          forget() { try { sessionStorage.removeItem(this.storageKey()); } catch { /* storage off */ } }

          // The API path of this client's tree: the shared root's, or its session's.
          path(rest) { return (this.sessionID ? "/api/sessions/" + this.sessionID : "/api") + rest; }

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
