public import GatewayCore
import NIOConcurrencyHelpers
public import NIOCore

/// One local rate limiter (an upstream's, or one endpoint's): drives a
/// ``RateLimitQueue`` with real waiting. A request that must wait its turn
/// gets a promise on its event loop; one pump task sleeps on the injected
/// clock until the head's token is due and fulfils the waiters' promises in
/// FIFO order. A waiter withdrawn (the client went away) leaves the queue at
/// once and its future fails with `CancellationError`.
public final class RateLimiter: Sendable {
    struct State {
        var queue: RateLimitQueue
        var nextID = 0
        /// The waiters in the queue: a promise on each one's event loop.
        var promises: [Int: EventLoopPromise<Void>] = [:]
        var pumpRunning = false
    }

    let state: NIOLockedValueBox<State>
    let clock: any PolicyClock
    let depthChanged: @Sendable (_ delta: Int) -> Void
    /// The bucket the replicas share (tokens leased from it); nil when local.
    let shared: SharedBucket?
    /// The parameters it was made with, to notice a config change.
    let parameters: Parameters

    struct Parameters: Hashable, Sendable {
        var requestsPerSecond: Double
        var burst: Int
        var maxQueue: Int
        var maxWait: Duration
    }

    init(_ parameters: Parameters, clock: any PolicyClock, shared: SharedBucket? = nil, depthChanged: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.parameters = parameters
        self.shared = shared
        self.clock = clock
        self.depthChanged = depthChanged
        let queue = RateLimitQueue(
            requestsPerSecond: parameters.requestsPerSecond, burst: parameters.burst,
            maxQueue: parameters.maxQueue, maxWait: parameters.maxWait, now: clock.now
        )
        self.state = NIOLockedValueBox(State(queue: queue))
    }

    /// Requests waiting now.
    public var depth: Int { state.withLockedValue { $0.queue.depth } }

    func isIdle(now: ContinuousClock.Instant) -> Bool {
        state.withLockedValue { $0.queue.isIdle(now: now) }
    }

    /// Decides at once, without a task. A request that must wait its turn gets
    /// a future on `eventLoop` that succeeds when its token is granted (or
    /// fails with the 503 of ``Admission/unavailable(_:)`` when the shared
    /// bucket becomes unreachable with `fail`), and a cancel that withdraws it
    /// (the future then fails with `CancellationError`).
    public func admit(on eventLoop: any EventLoop) -> Admission {
        let now = clock.now
        let mode = sharedMode()
        if mode == .refuse { return .unavailable(unavailableError()) }
        let (id, admission, promise, startPump) = state.withLockedValue { s -> (Int, RateLimitQueue.Admission, EventLoopPromise<Void>?, Bool) in
            s.queue.setLeased(mode == .leased, now: now)
            s.nextID += 1
            let admission = s.queue.arrive(s.nextID, now: now)
            var startPump = false
            var promise: EventLoopPromise<Void>?
            if admission == .wait {
                let made = eventLoop.makePromise(of: Void.self)
                s.promises[s.nextID] = made
                promise = made
                if !s.pumpRunning {
                    s.pumpRunning = true
                    startPump = true
                }
            }
            return (s.nextID, admission, promise, startPump)
        }
        switch admission {
        case .proceed:
            return .admitted
        case .reject(let retryAfter):
            return .rejected(retryAfter: retryAfter)
        case .wait:
            break
        }
        guard let promise else { return .admitted }
        depthChanged(1)
        if startPump { Task { await self.pump() } }
        return .queued(promise.futureResult, cancel: { [self] in self.withdraw(id) })
    }

    /// A waiter gave up: it leaves the queue and its future fails.
    private func withdraw(_ id: Int) {
        let promise = state.withLockedValue { s -> EventLoopPromise<Void>? in
            guard s.queue.cancel(id) else { return nil }
            return s.promises.removeValue(forKey: id)
        }
        guard let promise else { return }
        depthChanged(-1)
        promise.fail(CancellationError())
    }

    /// What ``admit(on:)`` decided.
    public enum Admission {
        case admitted
        case rejected(retryAfter: Duration)
        case queued(EventLoopFuture<Void>, cancel: @Sendable () -> Void)
        /// The shared bucket cannot be reached and `on_unavailable` is `fail`: 503.
        case unavailable(GatewayError)
    }

    /// Hands out tokens until nobody waits: local tokens when they are due
    /// (sleeping until then), leased ones as soon as a lease brings them.
    private func pump() async {
        while true {
            let mode = sharedMode()
            let (wake, needsLease) = state.withLockedValue { s -> (ContinuousClock.Instant?, Bool) in
                let now = clock.now
                s.queue.setLeased(mode == .leased, now: now)
                let wake = s.queue.nextGrant(now: now)
                if wake == nil { s.pumpRunning = false }
                return (wake, mode == .leased && !s.queue.available(now: now))
            }
            guard let wake else { return }
            switch mode {
            case .refuse:
                refuseWaiters()
                continue
            case .leased:
                if needsLease { await leaseTokens() }
            case .local:
                try? await clock.sleep(until: wake, tolerance: nil)
            }
            grantWaiters()
        }
    }

    /// Gives the tokens in hand to the waiters at the head of the queue.
    private func grantWaiters() {
        let now = clock.now
        let waiters = state.withLockedValue { s in s.takeWaiters(s.queue.grant(now: now)) }
        if waiters.count > 0 { depthChanged(-waiters.count) }
        for promise in waiters.promises { promise.succeed() }
    }
}

extension RateLimiter.State {
    /// The waiters of `ids`, taken out of ``promises``.
    mutating func takeWaiters(_ ids: [Int]) -> RateLimiter.TakenWaiters {
        var taken = RateLimiter.TakenWaiters(count: ids.count)
        for id in ids {
            if let promise = promises.removeValue(forKey: id) { taken.promises.append(promise) }
        }
        return taken
    }
}

extension RateLimiter {
    struct TakenWaiters {
        var count: Int
        var promises: [EventLoopPromise<Void>] = []
    }
}
