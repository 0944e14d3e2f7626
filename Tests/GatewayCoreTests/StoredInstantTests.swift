import GatewayCore
import Testing

/// ``StoredInstant`` keeps a clock instant by value: the same instant comes
/// back, distances and order are the clock's, and ``AttemptTimings`` reads
/// and writes its phases through it unchanged.
@Suite struct StoredInstantTests {
    static let base = ContinuousClock.now

    @Test(arguments: [Duration.zero, .nanoseconds(1), .milliseconds(1_500), .seconds(-3), .seconds(86_400 * 365)])
    func anInstantComesBackAsItWas(offset: Duration) {
        let instant = Self.base + offset
        #expect(StoredInstant(instant).instant == instant)
        #expect(StoredInstant(instant) - StoredInstant(Self.base) == offset)
        #expect((StoredInstant(instant) < StoredInstant(Self.base)) == (offset < .zero))
    }

    @Test func optionalsReadAndWriteTheClocksInstants() {
        var stored: StoredInstant? = nil
        #expect(stored.instant == nil)
        stored.instant = Self.base
        #expect(stored == StoredInstant(Self.base))
        stored.instant = nil
        #expect(stored == nil)
    }

    @Test func attemptTimingsKeepEveryPhase() {
        let t = Self.base
        var timings = AttemptTimings(started: t)
        timings.connectStart = t + .milliseconds(1)
        timings.connectEnd = t + .milliseconds(3)
        timings.tlsStart = t + .milliseconds(3)
        timings.tlsEnd = t + .milliseconds(7)
        timings.requestSent = t + .milliseconds(8)
        timings.$responseHead = StoredInstant(t + .milliseconds(20))
        timings.end = t + .milliseconds(25)
        #expect(timings.started == t)
        #expect(timings.responseHead == t + .milliseconds(20))
        #expect(timings.connect == .milliseconds(2))
        #expect(timings.tls == .milliseconds(4))
        #expect(timings.timeToFirstByte == .milliseconds(20))
        #expect(timings.total == .milliseconds(25))
        timings.tlsStart = nil
        #expect(timings.tls == nil)
        #expect(timings.$tlsStart == nil)
    }
}
