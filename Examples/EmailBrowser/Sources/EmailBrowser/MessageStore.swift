/// Identifies an email message.
public typealias MessageID = Int

/// A canned mailbox the email examples read from, so every process renders the same content.
public enum MessageStore {
    private static let subjects = ["Quarterly numbers", "Lunch on Friday?", "Build is green", "Re: snapshots", "Workflow plan"]

    /// The subject of message `id`.
    public static func subject(of id: MessageID) -> String {
        subjects[Int(id.magnitude % UInt(subjects.count))] + " #\(id)"
    }

    /// The body of message `id`.
    public static func body(of id: MessageID) -> String {
        "Message \(id): " + Array(repeating: "lorem ipsum", count: 1 + Int(id.magnitude % 3)).joined(separator: " ")
    }
}
