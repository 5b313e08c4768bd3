import Foundation
@testable import WireProtocol

/// A reproducible random source (SplitMix64), so a failing property test can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

enum Priority: String, Codable, Equatable, CaseIterable, Sendable {
    case low, normal, urgent
}

enum Attachment: Codable, Equatable, Sendable {
    case none
    case file(name: String, size: UInt64)
    case inline(Data)
    case link(URL, title: String?)
    case nested([Attachment])
}

struct Address: Codable, Equatable, Sendable {
    var name: String
    var email: String
    var tags: [String]
}

struct Message: Codable, Equatable, Sendable {
    var id: Int64
    var from: Address
    var to: [Address]
    var subject: String
    var body: String?
    var priority: Priority
    var read: Bool
    var score: Double
    var ratio: Float
    var counts: [String: Int]
    var byNumber: [Int: String]
    var attachments: [Attachment]
    var flags: Set<UInt8>
    var sentAt: Date
    var maybeMaybe: Int??
}

struct Inbox: Codable, Equatable, Sendable {
    var owner: String
    var messages: [Message]
    var unread: UInt32
    var selection: Int?
}

extension SeededGenerator {
    mutating func string() -> String {
        let alphabet: [String] = ["a", "b", "z", "Q", " ", "é", "🙂", "e\u{301}", "\0", "日本", "\u{1F1EB}\u{1F1F7}", "\n", "\""]
        let length = Int.random(in: 0...12, using: &self)
        return (0..<length).map { _ in alphabet.randomElement(using: &self) ?? "" }.joined()
    }

    mutating func address() -> Address {
        Address(name: string(), email: string(), tags: (0..<Int.random(in: 0...3, using: &self)).map { _ in string() })
    }

    mutating func attachment(depth: Int = 0) -> Attachment {
        switch Int.random(in: 0...(depth > 1 ? 3 : 4), using: &self) {
        case 0: return .none
        case 1: return .file(name: string(), size: UInt64.random(in: 0...UInt64.max, using: &self))
        case 2: return .inline(Data((0..<Int.random(in: 0...40, using: &self)).map { _ in UInt8.random(in: 0...255, using: &self) }))
        case 3:
            let url = URL(string: "https://example.com/\(Int.random(in: 0...1000, using: &self))")
            return .link(url ?? URL(fileURLWithPath: "/"), title: Bool.random(using: &self) ? string() : nil)
        default: return .nested((0..<Int.random(in: 0...3, using: &self)).map { _ in attachment(depth: depth + 1) })
        }
    }

    mutating func double() -> Double {
        switch Int.random(in: 0...5, using: &self) {
        case 0: return .infinity
        case 1: return -.greatestFiniteMagnitude
        case 2: return 0
        default: return Double.random(in: -1e12...1e12, using: &self)
        }
    }

    mutating func message() -> Message {
        let int64: Int64 = Bool.random(using: &self) ? Int64.random(in: .min ... .max, using: &self) : Int64.random(in: -5...5, using: &self)
        return Message(
            id: int64,
            from: address(),
            to: (0..<Int.random(in: 0...3, using: &self)).map { _ in address() },
            subject: string(),
            body: Bool.random(using: &self) ? string() : nil,
            priority: Priority.allCases.randomElement(using: &self) ?? .low,
            read: Bool.random(using: &self),
            score: double(),
            ratio: Float.random(in: -1000...1000, using: &self),
            counts: Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0...4, using: &self)).map { i in ("k\(i)\(string())", Int.random(in: .min ... .max, using: &self)) }),
            byNumber: Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0...4, using: &self)).map { i in (i * 1000 - 1500, string()) }),
            attachments: (0..<Int.random(in: 0...3, using: &self)).map { _ in attachment() },
            flags: Set((0..<Int.random(in: 0...5, using: &self)).map { _ in UInt8.random(in: 0...255, using: &self) }),
            sentAt: Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -1_000_000_000...1_000_000_000, using: &self))),
            maybeMaybe: Bool.random(using: &self) ? .some(.some(Int.random(in: -100...100, using: &self))) : .none
        )
    }

    mutating func inbox() -> Inbox {
        Inbox(
            owner: string(),
            messages: (0..<Int.random(in: 0...4, using: &self)).map { _ in message() },
            unread: UInt32.random(in: 0...UInt32.max, using: &self),
            selection: Bool.random(using: &self) ? Int.random(in: -3...300, using: &self) : nil
        )
    }
}

/// Both codecs, for parameterized tests.
let allCodecs: [any WireCodec] = [BinaryWireCodec(), JSONWireCodec()]

func roundTrip<T: Codable & Equatable>(_ value: T, _ codec: any WireCodec) throws -> T {
    try codec.decode(T.self, from: try codec.encode(value))
}

/// A representative rendering-sized struct (used for the size comparison).
let sampleMessage = Message(
    id: 42,
    from: Address(name: "Ada Lovelace", email: "ada@example.com", tags: ["vip"]),
    to: [Address(name: "Charles Babbage", email: "charles@example.com", tags: [])],
    subject: "Re: the analytical engine",
    body: "Punch cards are on their way.",
    priority: .normal,
    read: false,
    score: 0.75,
    ratio: 1.5,
    counts: ["replies": 3, "forwards": 1],
    byNumber: [1: "one"],
    attachments: [.file(name: "notes.txt", size: 1024)],
    flags: [1],
    sentAt: Date(timeIntervalSinceReferenceDate: 700_000_000),
    maybeMaybe: 7
)
