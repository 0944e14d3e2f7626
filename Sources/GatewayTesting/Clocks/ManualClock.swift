public import GatewayPolicies
import GatewayCore
import NIOConcurrencyHelpers

/// A ``PolicyClock`` that only moves when told to: `advance(by:)` moves time
/// forward and wakes every sleeper whose deadline has come, in deadline order.
/// For tests: no real sleeps, fully deterministic timing.
///
/// `waitForSleepers(_:)` lets a test wait until the code under test has gone to
/// sleep (so an `advance` is not lost by racing ahead of it).
public final class ManualClock: PolicyClock, Sendable {
    public typealias Instant = ContinuousClock.Instant
    public typealias Duration = Swift.Duration

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var offset: Swift.Duration = .zero
        var nextID = 0
        var sleepers: [Int: Sleeper] = [:]
        var cancelledIDs: Set<Int> = []
        var countWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let origin: Instant
    private let wallOrigin: Double
    private let state = NIOLockedValueBox(State())

    /// - Parameter secondsSince1970: the wall time at the start (default 2023-11-14T22:13:20Z).
    public init(secondsSince1970: Double = 1_700_000_000) {
        self.origin = ContinuousClock.now
        self.wallOrigin = secondsSince1970
    }

    public var now: Instant { origin + state.withLockedValue { $0.offset } }
    public var minimumResolution: Swift.Duration { .nanoseconds(1) }
    public var secondsSince1970: Double { wallOrigin + state.withLockedValue { $0.offset }.seconds }

    /// Time advanced so far.
    public var elapsed: Swift.Duration { state.withLockedValue { $0.offset } }

    /// Tasks sleeping on this clock right now.
    public var sleeperCount: Int { state.withLockedValue { $0.sleepers.count } }

    public func sleep(until deadline: Instant, tolerance: Swift.Duration? = nil) async throws {
        let id = state.withLockedValue { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (result, woken) = state.withLockedValue { s -> (Result<Void, any Error>?, [CheckedContinuation<Void, Never>]) in
                    if s.cancelledIDs.remove(id) != nil { return (.failure(CancellationError()), []) }
                    if deadline <= origin + s.offset { return (.success(()), []) }
                    s.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return (nil, Self.takeSatisfiedCountWaiters(&s))
                }
                if let result { continuation.resume(with: result) }
                for waiter in woken { waiter.resume() }
            }
        } onCancel: {
            let sleeper = state.withLockedValue { s -> Sleeper? in
                if let sleeper = s.sleepers.removeValue(forKey: id) { return sleeper }
                s.cancelledIDs.insert(id)
                return nil
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes the sleepers whose deadline is now reached.
    public func advance(by duration: Swift.Duration) {
        let due = state.withLockedValue { s -> [Sleeper] in
            s.offset += duration
            let now = origin + s.offset
            let due = s.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { s.sleepers.removeValue(forKey: id) }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Returns once at least `count` tasks sleep on this clock.
    public func waitForSleepers(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLockedValue { s -> Bool in
                if s.sleepers.count >= count { return true }
                s.countWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private static func takeSatisfiedCountWaiters(_ s: inout State) -> [CheckedContinuation<Void, Never>] {
        let count = s.sleepers.count
        let ready = s.countWaiters.filter { $0.count <= count }.map(\.continuation)
        s.countWaiters.removeAll { $0.count <= count }
        return ready
    }
}
