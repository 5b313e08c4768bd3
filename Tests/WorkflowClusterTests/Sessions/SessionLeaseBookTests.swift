import Testing
import WorkflowCluster

/// The session leases of a spread coordinator as a value: its term renewed, ended and lapsed,
/// and the leases held under it, from given times (no clock is read, no database).
@Suite("Session lease book")
struct SessionLeaseBookTests {
    static let start = ContinuousClock.now
    static let lease: Duration = .milliseconds(1_500)
    static let one = SessionID("0123456789abcdef0123456789abcdef")!
    static let two = SessionID("fedcba9876543210fedcba9876543210")!
    static let first = SessionLeaseTerm(number: 4, holder: "a")
    static let second = SessionLeaseTerm(number: 9, holder: "a")

    @Test("a term counts from before its request was sent; renewals three times per lease; a lapsed term loses every lease")
    func validity() {
        var book = SessionLeaseBook(lease: Self.lease)
        #expect(book.renewalInterval == .milliseconds(500))
        #expect(book.liveTerm(now: Self.start) == nil)
        let replaced = book.began(Self.first, askedAt: Self.start)
        let recorded = book.acquired(Self.one, token: FencingToken(rawValue: 3), under: Self.first)
        #expect(replaced.isEmpty && recorded)
        #expect(book.token(of: Self.one) == FencingToken(rawValue: 3))
        #expect(book.liveTerm(now: Self.start + .milliseconds(1_499)) == Self.first)
        let early = book.expired(now: Self.start + .milliseconds(1_499))
        let late = book.expired(now: Self.start + Self.lease)
        #expect(early.isEmpty && late == [Self.one])
        #expect(book.token(of: Self.one) == nil && book.term == nil, "a lapsed term's leases are forgotten")
    }

    @Test("a renewal extends the term from when it was sent; a late answer never shortens it")
    func renewal() {
        var book = SessionLeaseBook(lease: Self.lease)
        _ = book.began(Self.first, askedAt: Self.start)
        let asked = Self.start + .milliseconds(500)
        book.renewed(Self.first, askedAt: asked)
        #expect(book.validUntil == asked + Self.lease)
        book.renewed(Self.first, askedAt: Self.start + .milliseconds(100))
        #expect(book.validUntil == asked + Self.lease)
        // A renewal of a term no longer held changes nothing.
        book.renewed(Self.second, askedAt: asked + .seconds(10))
        #expect(book.validUntil == asked + Self.lease)
    }

    @Test("a term the store ended loses every lease; a lease answered under an ended term is not recorded")
    func ending() {
        var book = SessionLeaseBook(lease: Self.lease)
        _ = book.began(Self.first, askedAt: Self.start)
        _ = book.acquired(Self.one, token: FencingToken(rawValue: 1), under: Self.first)
        _ = book.acquired(Self.two, token: FencingToken(rawValue: 4), under: Self.first)
        let other = book.ended(Self.second)
        #expect(other.isEmpty, "another term's end says nothing of this one")
        let lost = book.ended(Self.first)
        #expect(lost == [Self.one, Self.two])
        #expect(book.held.isEmpty && book.liveTerm(now: Self.start) == nil)
        let recorded = book.acquired(Self.one, token: FencingToken(rawValue: 2), under: Self.first)
        #expect(!recorded && book.token(of: Self.one) == nil)
    }

    @Test("a newer term replaces the one held and loses its leases; an older term's late answer is ignored")
    func newerTerm() {
        var book = SessionLeaseBook(lease: Self.lease)
        _ = book.began(Self.first, askedAt: Self.start)
        _ = book.acquired(Self.one, token: FencingToken(rawValue: 1), under: Self.first)
        let replaced = book.began(Self.second, askedAt: Self.start + .milliseconds(10))
        let late = book.began(Self.first, askedAt: Self.start + .milliseconds(20))
        #expect(replaced == [Self.one] && late.isEmpty)
        #expect(book.term == Self.second)
        let recorded = book.acquired(Self.two, token: FencingToken(rawValue: 6), under: Self.second)
        let removed = book.remove(Self.two)
        #expect(recorded && removed == FencingToken(rawValue: 6) && book.held.isEmpty)
        let ended = book.endTerm()
        #expect(ended.isEmpty && book.term == nil)
    }
}
