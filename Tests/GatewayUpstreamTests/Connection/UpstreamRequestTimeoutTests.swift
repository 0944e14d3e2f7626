import NIOCore
import Testing

@testable import GatewayUpstream

/// The request timeout's clock as a value: armed only while the exchange waits
/// on the upstream, moved by the upstream's progress, never by the client's pace.
struct UpstreamRequestTimeoutTests {
    static func at(_ seconds: Int64) -> NIODeadline { .uptimeNanoseconds(UInt64(seconds) * 1_000_000_000) }

    @Test func disarmedUntilTheExchangeWaitsOnTheUpstream() {
        var clock = UpstreamRequestTimeout(timeout: .seconds(10))
        #expect(!clock.isArmed)
        #expect(clock.deadline == nil)
        #expect(!clock.hasExpired(now: Self.at(1_000)))

        clock.update(waitingOnUpstream: true, now: Self.at(100))
        #expect(clock.isArmed)
        #expect(clock.deadline == Self.at(110))
        #expect(!clock.hasExpired(now: Self.at(109)))
        #expect(clock.hasExpired(now: Self.at(110)))
    }

    @Test func progressMovesTheDeadline() {
        var clock = UpstreamRequestTimeout(timeout: .seconds(10))
        clock.update(waitingOnUpstream: true, now: Self.at(100))
        clock.progress(now: Self.at(108))
        #expect(clock.deadline == Self.at(118))
        #expect(!clock.hasExpired(now: Self.at(115)))
        #expect(clock.hasExpired(now: Self.at(118)))
    }

    /// Still waiting on the upstream: arming again keeps the last progress
    /// (a second `update` must not restart the clock and hide a stall).
    @Test func armingAnArmedClockKeepsItsLastProgress() {
        var clock = UpstreamRequestTimeout(timeout: .seconds(10))
        clock.update(waitingOnUpstream: true, now: Self.at(100))
        clock.update(waitingOnUpstream: true, now: Self.at(105))
        #expect(clock.deadline == Self.at(110))
    }

    /// Waiting on the client (a held read, a slow request body) does not count:
    /// the clock stops, and starts afresh when the exchange waits on the upstream again.
    @Test func timeWaitingOnTheClientDoesNotCount() {
        var clock = UpstreamRequestTimeout(timeout: .seconds(10))
        clock.update(waitingOnUpstream: true, now: Self.at(100))
        clock.update(waitingOnUpstream: false, now: Self.at(105))
        #expect(!clock.isArmed)
        #expect(!clock.hasExpired(now: Self.at(500)))
        clock.update(waitingOnUpstream: true, now: Self.at(500))
        #expect(clock.deadline == Self.at(510))

        clock.disarm()
        #expect(clock.deadline == nil)
        #expect(!clock.hasExpired(now: Self.at(10_000)))
    }
}
