import Foundation

/// A session kept out of memory's running trees: where its tree is, and the number of its
/// latest rendering (its next one continues from there).
package struct PassivatedSession: Sendable, Equatable {
    /// Where a passivated session's tree is.
    package enum Kept: Sendable, Equatable {
        /// In memory (no store): its snapshot and its client's props.
        case memory(snapshot: Data, props: Data?)
        /// In the store, under the session's scope: nothing of it in memory.
        case store
    }

    /// Where its tree is.
    package var kept: Kept
    /// The sequence number of its latest rendering.
    package var sequence: UInt64

    /// A passivated session.
    package init(kept: Kept, sequence: UInt64) {
        self.kept = kept
        self.sequence = sequence
    }
}
