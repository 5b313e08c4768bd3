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
/// - follows its session to the coordinator that owns it (spread sessions): a stream closed with
///   `session-elsewhere URL` reconnects there at once, and the rendering and events go there
///   too; an answer redirected (307) makes it find the owner again the same way. When the owner
///   is unreachable it asks the coordinator it started from again (which takes the session over
///   once the owner's lease runs out). A redirect that is not to an http(s) URL, or more than
///   `maximumHops` in a row without reaching the session (coordinators sending it to each
///   other), stops it in state `failed`, with `error` saying why;
/// - never shows an older rendering over a newer one of the same run;
/// - asks for deltas (docs/WIRE-PROTOCOL.md, "Rendering deltas"; `deltas: false` for whole
///   frames): after a first whole frame each message is the changes from the one before, applied
///   to a copy (parts that did not change stay the same objects), so `rendering` is the whole
///   rendering as before; it acknowledges what it applied once half the stream's window is
///   unacknowledged (one message in two, at most, not each), and on reconnecting says the last
///   sequence it applied, so it is sent only what it missed when the coordinator still has it;
/// - `send(sink, event)` posts an event and resolves with its outcome. When the sink is given as
///   a function of the rendering, a token a newer rendering replaced (410) is read again and the
///   event sent once more to the same place, as a person clicking again would. Until a
///   rendering shows it, the event is in `pending` (`{ sink, event, state }`, `state` `sending`
///   or `accepted`), and the outcome's `shown` resolves (`true`) once one does (`false` at once
///   when it was not accepted), so a page can mark a click as waiting.
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
        //   // (followed to the coordinator that owns it: `mine.base` is where it is served now)
        //   client.subscribe(c => draw(c.rendering, c.children, c.state));
        //   const outcome = await client.send(r => r.inbox.onMessageSelected, 3);
        //   if (!outcome.ok) show(outcome.message);
        "use strict";

        export class WorkflowClient {
          constructor({ base = "", bearerToken = null, session = null, minimumDelay = 250, maximumDelay = 5000, maximumHops = 4, deltas = true } = {}) {
            this.home = base;            // the gateway the page was given: it creates sessions, and says where one is now
            this.base = base;            // the gateway serving the session now (another coordinator's once followed)
            this.bearerToken = bearerToken;
            this.session = session;      // null: the shared root; else { root, props, id }
            this.sessionID = session && session.id ? session.id : null;
            this.minimumDelay = minimumDelay;
            this.maximumDelay = maximumDelay;
            this.maximumHops = maximumHops; // redirects in a row without reaching the session before giving up
            this.hops = 0;
            this.state = "connecting";   // "connecting" | "live" | "reconnecting" | "failed" | "closed"
            this.error = null;           // when "failed": { code, message }
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
            this.waiters = new Set();    // resolved at the next "live", "failed" or "closed"
            this.deltas = deltas;        // ask the stream for changes after a first whole frame
            this.stream = null;          // what the stream sent, applied: { sequence, rendering, children, root, deltas, run, window }
            this.pending = [];           // events sent and not yet shown: [{ sink, event, state: "sending" | "accepted" }]
            this.received = { whole: 0, delta: 0, bytes: 0 };   // the stream's messages by kind, and their characters
          }

          // Calls `listener(client)` on every new rendering and change of state; returns a
          // function that stops it.
          subscribe(listener) {
            this.listeners.add(listener);
            if (this.rendering !== null) listener(this);
            return () => this.listeners.delete(listener);
          }

          // Starts, or starts again after "failed".
          start() {
            if (this.state === "closed" || this.socket || this.opening) return this;
            if (this.state === "failed") { this.error = null; this.state = "reconnecting"; }
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
            // To the coordinator serving it (a redirect to its owner is followed).
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
          // A session that moved reconnects to its owner, whose stream brings the rendering.
          async refresh({ restarted = false } = {}) {
            const response = await fetch(this.base + this.path("/rendering"), { headers: this.headers(), redirect: "manual" });
            if (redirected(response)) return this.relocate();
            if (!response.ok) throw new Error("GET rendering answered " + response.status);
            if (this.accept(await response.json(), restarted)) this.notify();
          }

          // Sends `event` to a sink: `sink` is its token, or a function returning the token from a
          // rendering (then a 410 reads the rendering again and sends once more, to the new
          // token). An event redirected (307: the session moved) was not applied: it is sent once
          // more to the owner when the client is live there again. Resolves with
          // { ok, status, code, message, retryAfter } and never throws.
          async send(sink, event, options = {}) {
            const entry = { sink: typeof sink === "function" ? null : sink, event, state: "sending", after: null, shown: null };
            let resolveShown;
            entry.shown = new Promise(resolve => { resolveShown = resolve; });
            entry.resolve = resolveShown;
            this.pending.push(entry);
            this.notify();
            const outcome = await this.post(sink, event, entry, options);
            if (outcome.ok && entry.after !== null) {
              entry.state = "accepted";
              this.settlePending();
            } else {
              this.pending = this.pending.filter(other => other !== entry);
              resolveShown(false);
            }
            this.notify();
            return { ...outcome, shown: entry.shown };
          }

          // Posts one event (again after a 410 or a redirect); records the sequence it is to follow.
          async post(sink, event, entry, { retried = false, moved = false } = {}) {
            const token = typeof sink === "function" ? (this.rendering === null ? null : sink(this.rendering)) : sink;
            if (!token) return { ok: false, status: 0, code: "no-sink", message: "the rendering has no sink there now" };
            entry.sink = token;
            let response;
            try {
              response = await fetch(this.base + this.path("/events/" + encodeURIComponent(token)), {
                method: "POST", headers: { ...this.headers(), "Content-Type": "application/json" }, body: JSON.stringify(event ?? null),
                redirect: "manual" });
            } catch (error) {
              return { ok: false, status: 0, code: "unreachable", message: "the coordinator cannot be reached: " + error.message };
            }
            if (redirected(response)) {
              const where = await this.relocate();
              if (where === "live" && !moved) return this.post(sink, event, entry, { retried, moved: true });
              return { ok: false, status: 307, code: "session-elsewhere",
                message: "the session moved to another coordinator" + (this.error ? ": " + this.error.message : ", which could not be reached yet"),
                retryAfter: null };
            }
            let body = {};
            try { body = await response.json(); } catch { /* an answer without JSON */ }
            const outcome = {
              ok: response.ok, status: response.status, code: body.error ?? body.result ?? String(response.status),
              message: body.message ?? "", retryAfter: Number(response.headers.get("Retry-After")) || null };
            if (response.status === 410) {
              try { await this.refresh({ restarted: body.error === "restarted" }); } catch { return outcome; }
              if (typeof sink === "function" && !retried) return this.post(sink, event, entry, { retried: true });
            }
            // The rendering the event follows: a newer one shows it.
            if (response.ok) entry.after = typeof body.after === "number" ? body.after : this.sequence;
            return outcome;
          }

          // Resolves the pending events a rendering now shows.
          settlePending() {
            const shown = this.pending.filter(entry => entry.state === "accepted" && this.sequence > entry.after);
            if (shown.length === 0) return;
            this.pending = this.pending.filter(entry => !shown.includes(entry));
            for (const entry of shown) entry.resolve(true);
          }

          // Private below.
          async open() {
            if (this.session) {
              try { await this.ensureSession(); } catch { return this.retry(); }
            }
            // A session's stream tells where the session is when it is not here (its close reason).
            const url = new URL(this.base + this.path("/renderings"), location.href);
            url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
            if (this.bearerToken) url.searchParams.set("access_token", this.bearerToken);
            if (this.deltas) {
              url.searchParams.set("deltas", "1");
              // Resume: only what this client missed, when the coordinator still has it.
              if (this.stream !== null && this.stream.deltas) {
                url.searchParams.set("since", String(this.stream.sequence));
                url.searchParams.set("run", this.stream.run);
              }
            }
            const socket = new WebSocket(url);
            this.socket = socket;
            let first = true;
            let unacknowledged = 0;
            socket.onmessage = event => {
              let message;
              try { message = JSON.parse(event.data); } catch { return; }
              this.received.bytes += event.data.length;
              let frame;
              try {
                frame = this.applyStream(message);
              } catch (error) {
                // Changes that do not fit what this client has: start again from a whole frame.
                console.warn("workflow-client: " + error.message + "; asking for a whole frame");
                this.stream = null;
                socket.close();
                return;
              }
              if (frame === null) return;
              // Acknowledged once half the stream's window is unacknowledged: the server never
              // waits for this client, which sends one message for several it applied.
              if (this.stream.deltas && ++unacknowledged >= Math.max(1, Math.floor(this.stream.window / 2))) {
                socket.send(JSON.stringify({ ack: frame.sequence }));
                unacknowledged = 0;
              }
              // The first message of a connection is the tree as it is now, even if its number is
              // lower (a coordinator restarted without a store starts counting again); resumed
              // with changes, it is live again even when it has nothing newer to show.
              if (!this.accept(frame, first && !Array.isArray(message.ops)) && !first) return;
              first = false;
              this.attempt = 0;
              this.hops = 0;
              this.setState("live", false);
              this.notify();
            };
            socket.onclose = event => {
              if (this.socket !== socket) return;
              this.socket = null;
              const reason = event.reason || "";
              if (reason.startsWith("session-elsewhere ")) return this.follow(reason.slice("session-elsewhere ".length));
              this.hops = 0;
              // Not (or no longer) served where it was followed: the page's own gateway says where
              // it is now, and takes it over once its owner's lease has run out.
              this.base = this.home;
              if (this.session && (reason === "unknown-session" || reason === "unknown session")) {
                this.forget();
                this.sessionID = null;
              }
              this.retry();
            };
            this.connections += 1;
          }

          // Reconnects at once to the gateway `target` names, where the session's owner serves it;
          // a target that is not http(s), or one hop too many, fails the client with the reason.
          follow(target) {
            let url = null;
            try { url = new URL(target); } catch { /* not a URL */ }
            if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
              return this.fail("bad-redirect", "a coordinator sent this session to \"" + target + "\", which is not an http(s) URL");
            }
            this.hops += 1;
            if (this.hops > this.maximumHops) {
              return this.fail("redirect-loop", "the coordinators sent this session on " + this.maximumHops
                + " times in a row without serving it (last to " + url.origin + "): their advertised URLs (sessions.advertised_url) are wrong");
            }
            this.base = url.href.replace(/\/+$/, "");
            this.setState("reconnecting");
            this.start();
          }

          // After an answer redirected: reconnects the stream, which finds the owner; resolves with
          // the state reached ("live", "failed" or "closed"), or "reconnecting" if not live soon.
          relocate() {
            if (this.state === "failed" || this.state === "closed") return Promise.resolve(this.state);
            const reached = new Promise(resolve => {
              const timer = setTimeout(() => { this.waiters.delete(waiter); resolve(this.state); }, this.maximumDelay * 4);
              const waiter = state => { clearTimeout(timer); resolve(state); };
              this.waiters.add(waiter);
            });
            this.setState("reconnecting");
            const socket = this.socket;
            this.socket = null;
            if (socket) socket.close();
            this.base = this.home;
            if (this.timer) { clearTimeout(this.timer); this.timer = null; }
            this.start();
            return reached;
          }

          fail(code, message) {
            this.error = { code, message };
            this.base = this.home;
            this.hops = 0;
            this.setState("failed");
          }

          // Reconnects after a back-off with jitter, doubling up to `maximumDelay`.
          retry() {
            if (this.state === "closed" || this.state === "failed") return;
            this.setState("reconnecting");
            const ceiling = Math.min(this.maximumDelay, this.minimumDelay * 2 ** this.attempt);
            this.attempt += 1;
            this.timer = setTimeout(() => { this.timer = null; this.start(); }, ceiling / 2 + Math.random() * ceiling / 2);
          }

          // Makes sure `sessionID` names a session: the one this tab remembers (its stream says if
          // it no longer exists, or where it is), else a new one, on the page's own gateway.
          // Throws (and the caller retries) when the coordinator cannot say.
          async ensureSession() {
            if (!this.sessionID) this.sessionID = this.remembered();
            if (this.sessionID) return;
            this.base = this.home;
            const response = await fetch(this.home + "/api/sessions", {
              method: "POST", headers: { ...this.headers(), "Content-Type": "application/json" },
              body: JSON.stringify({ root: this.session.root, props: this.session.props }) });
            if (response.status !== 201) throw new Error("POST /api/sessions answered " + response.status);
            this.sessionID = (await response.json()).session;
            this.sequence = 0;
            this.stream = null;
            try { sessionStorage.setItem(this.storageKey(), this.sessionID); } catch { /* storage off: not remembered */ }
          }

          storageKey() { return "workflow-session:" + this.home + ":" + (this.session.root || ""); }
          remembered() { try { return sessionStorage.getItem(this.storageKey()); } catch { return null; } }
          forget() { try { sessionStorage.removeItem(this.storageKey()); } catch { /* storage off */ } }

          // The API path of this client's tree: the shared root's, or its session's.
          path(rest) { return (this.sessionID ? "/api/sessions/" + this.sessionID : "/api") + rest; }

          headers() { return this.bearerToken ? { Authorization: "Bearer " + this.bearerToken } : {}; }

          // What a stream message makes of what the stream sent before: a whole frame, or the
          // changes from the frame it names (which must be the one this client applied last);
          // null for what is not a rendering message. Throws when the changes do not fit.
          applyStream(message) {
            if (!message || typeof message.sequence !== "number") return null;
            if (Array.isArray(message.ops)) {
              if (this.stream === null || message.from !== this.stream.sequence) {
                throw new Error("changes from " + message.from + " to a client at " + (this.stream ? this.stream.sequence : "nothing"));
              }
              this.received.delta += 1;
              this.stream = { ...this.stream, sequence: message.sequence, rendering: applyDelta(this.stream.rendering, message.ops),
                children: Array.isArray(message.children) ? message.children : this.stream.children };
            } else {
              this.received.whole += 1;
              this.stream = { sequence: message.sequence, rendering: message.rendering, root: message.root,
                children: Array.isArray(message.children) ? message.children : [], deltas: message.deltas === 1 && typeof message.run === "string",
                run: message.run, window: Number.isInteger(message.window) && message.window > 0 ? message.window : 1 };
            }
            return this.stream;
          }

          accept(message, regardlessOfSequence) {
            if (!message || typeof message.sequence !== "number") return false;
            if (!regardlessOfSequence && message.sequence <= this.sequence) return false;
            this.root = message.root;
            this.rendering = message.rendering;
            this.sequence = message.sequence;
            this.children = Array.isArray(message.children) ? message.children : [];
            this.settlePending();
            return true;
          }

          setState(state, notify = true) {
            if (this.state === state || this.state === "closed") return;
            this.state = state;
            if (state === "live" || state === "failed" || state === "closed") {
              const waiters = [...this.waiters];
              this.waiters.clear();
              for (const waiter of waiters) waiter(state);
            }
            if (notify) this.notify();
          }

          notify() {
            for (const listener of this.listeners) {
              try { listener(this); } catch (error) { console.error(error); }
            }
          }
        }

        // The changes of a delta message applied to `value` (docs/WIRE-PROTOCOL.md, "Rendering
        // deltas"): a new value sharing the parts that did not change. Throws when they do not fit.
        export function applyDelta(value, ops) {
          if (!Array.isArray(ops)) throw new Error("the operations are not an array");
          for (const op of ops) value = applyOperation(value, op);
          return value;
        }

        function applyOperation(root, op) {
          const path = op && Array.isArray(op.path) ? op.path : null;
          if (path === null) throw new Error("an operation without a path");
          switch (op.op) {
            case "replace":
              if (!("value" in op)) throw new Error("replace without a value");
              return updateAt(root, path, 0, () => op.value);
            case "add":
            case "remove": {
              const field = path[path.length - 1];
              if (typeof field !== "string") throw new Error("a field change whose path does not end with a field");
              if (op.op === "add" && !("value" in op)) throw new Error("add without a value");
              return updateAt(root, path.slice(0, -1), 0, parent => {
                if (!isObject(parent)) throw new Error("a field change in something not an object");
                const copy = { ...parent };
                if (op.op === "add") copy[field] = op.value;
                else if (!Object.hasOwn(copy, field)) throw new Error("no field \"" + field + "\" to remove");
                else delete copy[field];
                return copy;
              });
            }
            case "keyed":
              return updateAt(root, path, 0, list => applyKeyed(list, op));
            default:
              throw new Error("an unknown operation " + JSON.stringify(op.op));
          }
        }

        function isObject(value) { return value !== null && typeof value === "object" && !Array.isArray(value); }

        // `fn` applied at `path` inside `value`, copying only the objects and arrays on the path.
        function updateAt(value, path, index, fn) {
          if (index === path.length) return fn(value);
          const step = path[index];
          if (typeof step === "string") {
            if (!isObject(value) || !Object.hasOwn(value, step)) throw new Error("no field \"" + step + "\" on the path");
            return { ...value, [step]: updateAt(value[step], path, index + 1, fn) };
          }
          if (Number.isInteger(step) && Array.isArray(value) && step >= 0 && step < value.length) {
            const copy = value.slice();
            copy[step] = updateAt(value[step], path, index + 1, fn);
            return copy;
          }
          throw new Error("no element " + JSON.stringify(step) + " on the path");
        }

        function keyOf(element, by) {
          if (by === null) return typeof element === "string" ? element : undefined;
          return isObject(element) && (typeof element[by] === "string" || Number.isInteger(element[by])) ? element[by] : undefined;
        }

        // A keyed array's changes: removals, then placements in order (each right after the element
        // keyed `after`, or first), then changes inside elements, all by key.
        function applyKeyed(list, op) {
          if (!Array.isArray(list)) throw new Error("a keyed change to something not an array");
          const by = typeof op.by === "string" ? op.by : null;
          const byKey = new Map();
          for (const element of list) {
            const key = keyOf(element, by);
            if (key === undefined) throw new Error("an element without a key");
            byKey.set(key, element);
          }
          const leaving = new Set(op.remove || []);
          for (const key of op.remove || []) if (!byKey.has(key)) throw new Error("no element keyed " + JSON.stringify(key) + " to remove");
          for (const place of op.place || []) if (!("value" in place)) leaving.add(place.key);
          const result = list.filter(element => !leaving.has(keyOf(element, by)));
          const find = key => result.findIndex(element => keyOf(element, by) === key);
          for (const place of op.place || []) {
            let element;
            if ("value" in place) element = place.value;
            else if (byKey.has(place.key)) element = byKey.get(place.key);
            else throw new Error("no element keyed " + JSON.stringify(place.key) + " to move");
            let at = 0;
            if (place.after !== null && place.after !== undefined) {
              const index = find(place.after);
              if (index < 0) throw new Error("no element keyed " + JSON.stringify(place.after) + " to place after");
              at = index + 1;
            }
            result.splice(at, 0, element);
          }
          for (const change of op.change || []) {
            const index = find(change.key);
            if (index < 0) throw new Error("no element keyed " + JSON.stringify(change.key) + " to change");
            result[index] = applyDelta(result[index], change.ops);
          }
          return result;
        }

        // Whether an answer is a redirect (a session another coordinator owns): opaque in a
        // browser with `redirect: "manual"`, a plain 307 elsewhere.
        function redirected(response) {
          return response.type === "opaqueredirect" || response.status === 307 || response.status === 308;
        }

        // A started client (see WorkflowClient's constructor for the options).
        export function connect(options = {}) {
          return new WorkflowClient(options).start();
        }
        """#
}
