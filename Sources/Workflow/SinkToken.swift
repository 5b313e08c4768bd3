/// A sink's token: the one place that writes it and reads its parts.
///
/// A runtime token is `<node>:<slot>:<event type>@<host incarnation in base 36>.<render pass>`.
/// It names the handler of one render pass, not a position, so an event sent through a sink
/// decoded from an earlier rendering applies that rendering's closure (the rule `Sink`
/// documents), and can never reach the handler a later pass declared at the same position for
/// another row. Its parts:
///
/// - the *route* (everything before the last `@`: node, slot, event type) names where the sink
///   sits; stable across hosts running the same build, it is what a child restarted on another
///   worker after a failover answers to for the tokens its parent still holds from the lost
///   worker (the worker's `SinkTable`);
/// - the *incarnation* names the start of the host that made it, so a token from before a
///   restart can be told apart (the cluster's `SinkTokenTable` answers it `restarted`);
/// - the *pass* names the render pass; a token without it names a *place* (`route@incarnation`),
///   the same for every pass's sink there, which is how clients of the HTTP gateway hold sinks.
///
/// A middle process of a three-process tree passes a decoded sink on as a *forwarded* token,
/// `f<prefix>~<carried token>`: it parses the same way (its route is the prefix with the carried
/// token's route, its incarnation and pass the carried token's).
///
/// The bytes are part of the remote protocol: parent and worker of different builds must agree
/// on them, so this type only ever changes together with WIRE-PROTOCOL.md.
package struct SinkToken: Sendable {
    /// Where the sink sits: the token before its last `@`.
    package let route: Substring
    /// The host incarnation: between the last `@` and the following `.` (or the end).
    package let incarnation: Substring
    /// The render pass, after that `.`; `nil` for a token that names a place.
    package let pass: Substring?

    /// The parts of `token`; `nil` for a token with no `@` (no runtime made it).
    ///
    /// Scans the UTF-8 bytes, contiguous when the string has them (a native string does): the
    /// separators are ASCII, and a search by `Character` (grapheme breaking over the whole
    /// token) or over the generic `UTF8View` cost more, once per rendered sink.
    package init?(parsing token: String) {
        let utf8 = token.utf8
        let offsets = utf8.withContiguousStorageIfAvailable { bytes -> (at: Int, dot: Int)? in
            guard let at = bytes.lastIndex(of: UInt8(ascii: "@")) else { return nil }
            return (at, bytes[(at + 1)...].firstIndex(of: UInt8(ascii: ".")) ?? bytes.count)
        }
        let at: String.Index
        let dot: String.Index
        if let offsets {
            guard let offsets else { return nil }
            at = utf8.index(utf8.startIndex, offsetBy: offsets.at)
            dot = utf8.index(utf8.startIndex, offsetBy: offsets.dot)
        } else {
            guard let found = utf8.lastIndex(of: UInt8(ascii: "@")) else { return nil }
            at = found
            dot = utf8[utf8.index(after: found)...].firstIndex(of: UInt8(ascii: ".")) ?? utf8.endIndex
        }
        route = token[..<at]
        incarnation = token[utf8.index(after: at)..<dot]
        pass = dot == token.endIndex ? nil : token[utf8.index(after: dot)...]
    }

    /// Whether the token has the shape a runtime writes: a non-empty base-36 incarnation and, if
    /// it has one, a decimal pass. A client's typo has some other shape and is *unknown*, never
    /// mistaken for a token from before a restart.
    ///
    /// Read over the UTF-8 bytes (ASCII digits and lowercase letters are one byte each, and any
    /// other byte fails): a `Character`'s Unicode properties cost about 20,000 instructions per
    /// token, and the gateway asks for each token of every rendering.
    package var isWellFormed: Bool {
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        func isLowercaseLetter(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
        guard !incarnation.isEmpty, incarnation.utf8.allSatisfy({ isDigit($0) || isLowercaseLetter($0) }) else { return false }
        guard let pass else { return true }
        return !pass.isEmpty && pass.utf8.allSatisfy(isDigit)
    }

    /// The token's place: the token without its render pass (`route@incarnation`).
    package var place: Substring {
        route.base[route.startIndex..<incarnation.endIndex]
    }

    /// The place of `token` (see `place`), the same for every pass's sink there; a token with no
    /// pass, or of no runtime shape, is returned whole.
    package static func place(of token: String) -> String {
        guard let parsed = SinkToken(parsing: token), parsed.pass != nil else { return token }
        return String(parsed.place)
    }

    /// What `Sink.inert` encodes as: no runtime token is empty.
    package static let inert = ""

    /// The token of a runtime-made sink: `<node>:<slot>:<event type>@<incarnation in base 36>.<pass>`.
    ///
    /// Written byte by byte into one buffer: string interpolation of the five parts (each number
    /// made a `String` of its own, then appended) cost several times as much per encoded sink,
    /// once per rendering sent, for the same bytes.
    package static func make<Event>(node: UInt64, slot: Int, event: Event.Type, incarnation: UInt64, pass: UInt64) -> String {
        var typeName = _typeName(event, qualified: true)
        return typeName.withUTF8 { name in
            // Three decimal UInt64s (≤ 20 digits each, a sign for the slot), one base-36 UInt64
            // (≤ 13), four separators.
            String(unsafeUninitializedCapacity: name.count + 78) { buffer in
                var at = writeDigits(of: node, radix: 10, to: buffer, at: 0)
                buffer[at] = UInt8(ascii: ":")
                at += 1
                if slot < 0 {
                    buffer[at] = UInt8(ascii: "-")
                    at += 1
                }
                at = writeDigits(of: UInt64(slot.magnitude), radix: 10, to: buffer, at: at)
                buffer[at] = UInt8(ascii: ":")
                at += 1
                for byte in name {
                    buffer[at] = byte
                    at += 1
                }
                buffer[at] = UInt8(ascii: "@")
                at = writeDigits(of: incarnation, radix: 36, to: buffer, at: at + 1)
                buffer[at] = UInt8(ascii: ".")
                return writeDigits(of: pass, radix: 10, to: buffer, at: at + 1)
            }
        }
    }

    /// The token a middle process passes `token` on as, for the remote child whose forwarding
    /// prefix is `prefix` (`f…`, see the remote runtime's `SinkForwarder`).
    package static func forwarding(_ token: String, prefix: String) -> String {
        prefix + "~" + token
    }

    /// The forwarding prefix and the carried token of a token made by `forwarding(_:prefix:)`;
    /// `nil` for a runtime token (which starts with a node number).
    package static func forwarded(_ token: String) -> (prefix: Substring, token: Substring)? {
        guard token.first == "f", let tilde = token.firstIndex(of: "~") else { return nil }
        return (token[..<tilde], token[token.index(after: tilde)...])
    }

    /// Writes `value`'s digits in `radix` (lowercase letters past 9, as `String(_:radix:)`)
    /// from `start`; returns the index after the last.
    private static func writeDigits(of value: UInt64, radix: UInt64, to buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        var count = 1
        var rest = value / radix
        while rest > 0 {
            count += 1
            rest /= radix
        }
        var value = value
        var index = start + count
        repeat {
            index -= 1
            let digit = UInt8(truncatingIfNeeded: value % radix)
            buffer[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
            value /= radix
        } while value > 0
        return start + count
    }
}
