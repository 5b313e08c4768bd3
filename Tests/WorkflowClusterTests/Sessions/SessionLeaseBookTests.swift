import Testing
import WorkflowCluster

/// The session leases of a spread coordinator as a value: which are renewed, lost and run out,
/// from given times (no clock is read, no database).
@Suite("Session lease book")
struct SessionLeaseBookTests {
    static let start = ContinuousClock.now
    static let lease: Duration = .milliseconds(1_500)
    static let one = SessionID("0123456789abcdef0123456789abcdef")!
    static let two = SessionID("fedcba9876543210fedcba9876543210")!

    @Test("a lease counts from before its request was sent; renewals three times per lease")
    func validity() {
        var book = SessionLeaseBook(lease: Self.lease)
        #expect(book.renewalInterval == .milliseconds(500))
        book.acquired(Self.one, token: FencingToken(rawValue: 3), askedAt: Self.start, answeredAt: Self.start + .milliseconds(200))
        #expect(book.token(of: Self.one) == FencingToken(rawValue: 3))
        #expect(book.held[Self.one]?.validUntil == Self.start + Self.lease)
        #expect(book.expired(now: Self.start + .milliseconds(1_499)).isEmpty)
        #expect(book.expired(now: Self.start + Self.lease) == [Self.one])
        #expect(book.token(of: Self.one) == nil, "an expired lease is forgotten")
    }

    @Test("a renewal extends what it renewed under the same token, from when it was sent")
    func renewal() {
        var book = SessionLeaseBook(lease: Self.lease)
        book.acquired(Self.one, token: FencingToken(rawValue: 1), askedAt: Self.start, answeredAt: Self.start)
        let asked = Self.start + .milliseconds(500)
        let lost = book.renewed([Self.one: FencingToken(rawValue: 1)], askedAt: asked)
        #expect(lost.isEmpty)
        #expect(book.held[Self.one]?.validUntil == asked + Self.lease)
        // An answer that arrives late never shortens a lease a later renewal extended.
        _ = book.renewed([Self.one: FencingToken(rawValue: 1)], askedAt: Self.start + .milliseconds(100))
        #expect(book.held[Self.one]?.validUntil == asked + Self.lease)
    }

    @Test("a lease missing from a renewal, or renewed under another token, is lost; one taken while the renewal was under way is not")
    func loss() {
        var book = SessionLeaseBook(lease: Self.lease)
        book.acquired(Self.one, token: FencingToken(rawValue: 1), askedAt: Self.start, answeredAt: Self.start)
        book.acquired(Self.two, token: FencingToken(rawValue: 4), askedAt: Self.start, answeredAt: Self.start)
        let asked = Self.start + .milliseconds(500)
        // `two` was taken by another coordinator (its token rose; it is no longer ours).
        #expect(book.renewed([Self.one: FencingToken(rawValue: 1), Self.two: FencingToken(rawValue: 5)], askedAt: asked) == [Self.two])
        #expect(book.token(of: Self.two) == nil && book.token(of: Self.one) != nil)
        #expect(book.renewed([:], askedAt: asked + .milliseconds(500)) == [Self.one])
        // Taken (answered) after the renewal was sent: its absence from the answer says nothing.
        book.acquired(Self.two, token: FencingToken(rawValue: 6), askedAt: asked, answeredAt: asked + .milliseconds(600))
        #expect(book.renewed([:], askedAt: asked + .milliseconds(550)).isEmpty)
        #expect(book.token(of: Self.two) == FencingToken(rawValue: 6))
        #expect(book.remove(Self.two) == FencingToken(rawValue: 6) && book.held.isEmpty)
    }
}
