import GatewayPolicies
import GatewayTesting
import Testing

@Suite(.timeLimit(.minutes(1)))
struct RateLimitQueueTests {
    @Test func burstThenRate() {
        let clock = ManualClock()
        var bucket = TokenBucket(rate: 10, capacity: 5, now: clock.now)
        let burst = (0..<8).filter { _ in bucket.take(now: clock.now) }.count
        #expect(burst == 5)
        clock.advance(by: .milliseconds(100))
        let refilled = bucket.take(now: clock.now)
        let empty = bucket.take(now: clock.now)
        #expect(refilled && !empty)
        // Over 10 s at 10/s: 100 tokens, never more than the capacity at once.
        var taken = 0
        for _ in 0..<1000 {
            clock.advance(by: .milliseconds(10))
            if bucket.take(now: clock.now) { taken += 1 }
        }
        #expect(taken == 100)
        clock.advance(by: .seconds(60))
        #expect((0..<10).filter { _ in bucket.take(now: clock.now) }.count == 5)
    }

    @Test func queueIsFIFOAndBounded() {
        let clock = ManualClock()
        var queue = RateLimitQueue(requestsPerSecond: 2, burst: 1, maxQueue: 3, maxWait: .seconds(10), now: clock.now)
        let a1 = queue.arrive(1, now: clock.now)
        #expect(a1 == .proceed)
        let a2 = queue.arrive(2, now: clock.now)
        #expect(a2 == .wait)
        let a3 = queue.arrive(3, now: clock.now)
        #expect(a3 == .wait)
        let a4 = queue.arrive(4, now: clock.now)
        #expect(a4 == .wait)
        let a5 = queue.arrive(5, now: clock.now)
        #expect(a5 == .reject(retryAfter: .seconds(2)), "queue full: its token would come in 2 s")
        #expect(queue.depth == 3)
        #expect(queue.nextGrant(now: clock.now) == clock.now + .milliseconds(500))
        clock.advance(by: .milliseconds(500))
        let first = queue.grant(now: clock.now)
        clock.advance(by: .milliseconds(500))
        let second = queue.grant(now: clock.now)
        #expect(first == [2] && second == [3])
        let left = queue.cancel(4)
        let alreadyGranted = queue.cancel(2)
        #expect(left && !alreadyGranted)
        #expect(queue.depth == 0)
        #expect(queue.nextGrant(now: clock.now) == nil)
    }

    @Test func anExpectedWaitBeyondMaxWaitIsRejected() {
        let clock = ManualClock()
        var queue = RateLimitQueue(requestsPerSecond: 1, burst: 1, maxQueue: 100, maxWait: .milliseconds(2500), now: clock.now)
        let a1 = queue.arrive(1, now: clock.now)
        #expect(a1 == .proceed)
        let a2 = queue.arrive(2, now: clock.now)
        #expect(a2 == .wait)  // 1 s
        let a3 = queue.arrive(3, now: clock.now)
        #expect(a3 == .wait)  // 2 s
        let a4 = queue.arrive(4, now: clock.now)
        #expect(a4 == .reject(retryAfter: .seconds(3)))
    }

    @Test func zeroQueueNeverWaits() {
        let clock = ManualClock()
        var queue = RateLimitQueue(requestsPerSecond: 4, burst: 1, maxQueue: 0, maxWait: .seconds(10), now: clock.now)
        let a1 = queue.arrive(1, now: clock.now)
        #expect(a1 == .proceed)
        let a2 = queue.arrive(2, now: clock.now)
        #expect(a2 == .reject(retryAfter: .milliseconds(250)))
    }
}
