import Testing
@testable import WorkflowCluster

/// A token's tree mark (`TreeMark`): read from its bytes when it is ASCII around the mark, by
/// `Character` otherwise, alike either way.
@Suite struct TreeMarkTests {
    static let mark = "0123456789ab"

    @Test func aSessionsTokenCarriesItsMark() {
        #expect(TreeMark.token("0123456789ab|0:1:Int@k2.3", belongsTo: Self.mark))
        #expect(TreeMark.token("0123456789ab|", belongsTo: Self.mark))
        #expect(!TreeMark.token("0123456789ab|0:1:Int@k2.3", belongsTo: nil))
        #expect(!TreeMark.token("0123456789ab|0:1:Int@k2.3", belongsTo: "ffffffffffff"))
    }

    @Test func tokensWithoutAMarkBelongToTheSharedRoot() {
        for token in [
            "", "0:1:Int@k2.3", "0123456789ab", "0123456789AB|x", "0123456789a|x", "0123456789abc|x", "0123456789ag|x", "x|y",
            // A `|` with a combining mark is not a `|` character: there is no mark before it.
            "0123456789ab|\u{301}x",
        ] {
            #expect(TreeMark.token(token, belongsTo: nil), "\(token.debugDescription)")
            #expect(!TreeMark.token(token, belongsTo: Self.mark), "\(token.debugDescription)")
        }
    }

    @Test func nonASCIIMarksAreReadByCharacter() {
        // Fullwidth digits are hex digits to `Character`: a mark, though no session's.
        let fullwidth = "\u{FF10}123456789ab|x"
        #expect(!TreeMark.token(fullwidth, belongsTo: nil))
        #expect(!TreeMark.token(fullwidth, belongsTo: Self.mark))
        // A digit with a combining mark is not a hex digit: no mark.
        #expect(TreeMark.token("0\u{301}123456789ab|x", belongsTo: nil))
    }
}
