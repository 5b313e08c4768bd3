/// One settled rendering of the coordinator's root, ready to print.
///
/// Roots render different screens; the coordinator only needs to show them (as a text screen for
/// people, as one JSON line for tests and tools) and to know when every pane has really been
/// rendered (not a placeholder) for the scripted demo.
public struct RenderedFrame: Sendable, Equatable {
    /// A small text screen, several lines, naming the process that rendered each pane.
    public var text: String
    /// The same as one line of JSON (no newlines).
    public var json: String
    /// Whether every pane was rendered by a real process (none is a placeholder).
    public var isComplete: Bool
    /// The root's current selection, if it has one (what the demo waits for after selecting).
    public var selection: Int?

    /// Creates a frame.
    public init(text: String, json: String, isComplete: Bool, selection: Int?) {
        self.text = text
        self.json = json
        self.isComplete = isComplete
        self.selection = selection
    }
}
