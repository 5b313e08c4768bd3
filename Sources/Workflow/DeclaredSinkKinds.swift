/// Which kinds of sink a node's render passes declared, so that a sink the workflow stopped
/// declaring is dropped while one it declares again keeps working.
///
/// workflow-swift invalidates a sink when the next render pass does not make a sink of the same
/// action type again: an old screen's button whose handler the workflow no longer offers must not
/// act. Here a sink's kind is its handler's class (the event and action types), and a sink made
/// in pass `p` is current while its kind has been declared by every pass of the node since `p`.
///
/// Kept as two short arrays swapped each pass (nodes declare few kinds, however many sinks), so
/// a pass allocates nothing once they have grown.
struct DeclaredSinkKinds {
    /// A kind the latest pass declared, and the first pass of its unbroken run of declarations.
    private struct Declaration {
        let kind: ObjectIdentifier
        let since: UInt64
    }

    /// The latest pass's declarations (the one rendering now, while a pass runs).
    private var latest: [Declaration] = []
    /// The pass before's, to carry each kind's `since` over.
    private var previous: [Declaration] = []

    /// Starts a pass: the latest declarations become the previous ones.
    mutating func beginPass() {
        swap(&latest, &previous)
        latest.removeAll(keepingCapacity: true)
    }

    /// Records that the pass `pass` declared a sink of `kind`.
    mutating func declare(_ kind: ObjectIdentifier, in pass: UInt64) {
        guard !latest.contains(where: { $0.kind == kind }) else { return }
        let since = previous.first { $0.kind == kind }?.since ?? pass
        latest.append(Declaration(kind: kind, since: since))
    }

    /// Whether a sink of `kind` made in `pass` is still declared: the latest pass declared its
    /// kind and so did every pass since `pass`.
    func isCurrent(_ kind: ObjectIdentifier, madeIn pass: UInt64) -> Bool {
        guard let declaration = latest.first(where: { $0.kind == kind }) else { return false }
        return declaration.since <= pass
    }
}
