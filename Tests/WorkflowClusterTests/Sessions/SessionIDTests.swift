import Testing
import WorkflowCluster

/// A session id is exactly 32 lowercase hex digits, whatever string type spells it: anything
/// else is no id (an unknown session to the gateway), never a crash.
@Suite struct SessionIDTests {
    @Test func thirtyTwoLowercaseHexDigitsAndNothingElse() {
        let valid = "0123456789abcdef0123456789abcdef"
        #expect(SessionID(valid)?.text == valid)
        #expect(SessionID("x\(valid)x".dropFirst().dropLast())?.text == valid)
        for invalid in [
            "", String(valid.dropLast()), valid + "0", valid.uppercased(), "0123456789abcdeg0123456789abcdef",
            "0123456789abcdef0123456789abcdé", "0123456789abcdef 123456789abcdef", "/123456789abcdef0123456789abcdef",
        ] {
            #expect(SessionID(invalid) == nil, "\(invalid)")
        }
        let fresh = SessionID.random()
        #expect(SessionID(fresh.text) == fresh)
    }
}
