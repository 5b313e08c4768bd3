// The worker role's state machine (`WorkerStateMachine.swift`): the link to the parent as the
// protocol sees it (its handshake, the WELCOME and what it promised, the last message each way,
// the reconnections), with the only code that changes it.
extension WorkerStateMachine {
    /// The link to the parent. Its fields change only through its methods, which the machine's
    /// connection, lease and timer rules call.
    struct ParentLink {
        /// Whether the parent welcomed this worker (and has not forgotten it since, as far as it knows).
        private(set) var isWelcomed = false
        /// Whether the parent's WELCOME said it understands DRAIN.
        private(set) var parentDrains = false
        /// Whether the parent's WELCOME said its STARTs name the last event their snapshot includes.
        private(set) var parentStartsCarryBase = false
        /// When the current connection completed its handshake (`nil`: not yet).
        private(set) var connectedAt: Instant?
        /// Whether the current connection's handshake failed.
        private(set) var handshakeFailed = false
        /// Whether a HELLO found no connection to take it: sent again when a handshake succeeds.
        private(set) var helloPending = false
        /// Whether trouble with the connection was reported, so its recovery is reported once too.
        private(set) var connectionTrouble = false
        /// Reconnections since the parent last welcomed this worker (for exponential back-off).
        private(set) var reconnectAttempts = 0
        private(set) var lastHeard: Instant
        private(set) var lastSent: Instant

        init(at now: Instant) {
            lastHeard = now
            lastSent = now
        }

        /// Any message from the parent arrived: it is alive, and the connection proven.
        mutating func heard(at now: Instant) {
            lastHeard = now
            if connectedAt == nil { connectedAt = now }
        }

        /// A message left for the parent.
        mutating func sent(at now: Instant) {
            lastSent = now
        }

        /// A message no connection took (`hello`: a HELLO, sent again on the next handshake).
        mutating func sendFailed(hello: Bool) -> SendFailure {
            guard connectedAt != nil else {
                if hello { helloPending = true }
                return .notConnectedYet
            }
            return .dropped
        }

        /// WELCOME, promising DRAIN (`drains`) and STARTs that name their snapshot's last event.
        mutating func welcomed(drains: Bool, startsCarryBase: Bool) {
            reconnectAttempts = 0
            parentDrains = drains
            parentStartsCarryBase = startsCarryBase
            isWelcomed = true
        }

        /// A welcomed worker's connection came back (it rejoins): whether trouble had been
        /// reported, so its recovery is said.
        mutating func reestablished() -> Bool {
            defer { connectionTrouble = false }
            return connectionTrouble
        }

        /// The first handshake of this connection succeeded: silence is counted from now, and
        /// a HELLO that found no connection leaves now.
        mutating func connected(at now: Instant) -> Handshake {
            connectedAt = now
            handshakeFailed = false
            // Silence is counted from the moment the parent can hear this worker.
            lastHeard = now
            // A HELLO queued before the connection leaves only now: that is this worker's last send
            // as far as the parent (and fencing) can tell.
            lastSent = now
            var result = Handshake(sendHello: false, recovered: connectionTrouble)
            if helloPending {
                helloPending = false
                result.sendHello = true
            }
            connectionTrouble = false
            return result
        }

        /// The handshake failed.
        mutating func failedHandshake() {
            connectionTrouble = true
            handshakeFailed = true
        }

        /// libzmq retries connecting; returns whether that is news worth a line.
        mutating func retriedConnecting() -> Bool {
            guard !connectionTrouble else { return false }
            connectionTrouble = true
            return true
        }

        /// The socket is replaced and HELLO sent again: the attempt's number (for the back-off)
        /// and whether the old socket's handshake had failed.
        mutating func reconnecting(at now: Instant) -> (attempt: Int, afterFailedHandshake: Bool) {
            reconnectAttempts += 1
            defer {
                connectedAt = nil
                handshakeFailed = false
                helloPending = false
                lastHeard = now
            }
            return (reconnectAttempts, handshakeFailed)
        }

        /// The parent no longer counts on this worker (its children are forgotten): it joins again.
        mutating func forgotten() {
            isWelcomed = false
        }
    }
}
