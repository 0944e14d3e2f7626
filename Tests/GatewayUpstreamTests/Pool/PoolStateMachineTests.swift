import GatewayCore
import GatewayTesting
import Testing

@testable import GatewayUpstream

/// The pool's decisions for HTTP/1.1 keys, without sockets.
@Suite("PoolStateMachine: HTTP/1.1")
struct PoolStateMachineTests {
    typealias Machine = PoolStateMachine<TestKey>
    typealias Action = Machine.Action

    /// Opens a connection for `key` through a first waiter and returns its id, leaving it in use by `waiter`.
    private func establishInUse(_ machine: inout Machine, key: TestKey = "a", waiter: Int) -> Int {
        let actions = machine.request(waiter, key: key)
        guard case .createConnection(let id, _, .http1) = actions.last else {
            Issue.record("expected a new connection, got \(actions)")
            return -1
        }
        #expect(machine.connectionEstablished(id, as: .http1) == [.cancelWaiterTimeout(waiter), .useConnection(id, waiter: waiter, reused: false)])
        return id
    }

    @Test func firstRequestOpensAConnectionAndServesTheWaiterWhenEstablished() {
        var machine = Machine(maxConnectionsPerKey: 4)
        #expect(machine.request(1, key: "a") == [.scheduleWaiterTimeout(1), .createConnection(0, "a", .http1)])
        #expect(machine.connectingCount == 1)
        #expect(machine.openConnectionCount == 0)
        #expect(machine.connectionEstablished(0, as: .http1) == [.cancelWaiterTimeout(1), .useConnection(0, waiter: 1, reused: false)])
        #expect(machine.openConnectionCount == 1)
        #expect(machine.state(of: 0) == .inUse)
    }

    @Test func releasedConnectionIsReusedWithoutConnecting() {
        var machine = Machine(maxConnectionsPerKey: 4)
        let id = establishInUse(&machine, waiter: 1)
        #expect(machine.connectionReleased(id, reusable: true) == [.scheduleIdleTimer(id, generation: 1)])
        #expect(machine.idleConnectionCount == 1)
        #expect(machine.request(2, key: "a") == [.cancelIdleTimer(id), .useConnection(id, waiter: 2, reused: true)])
        #expect(machine.idleConnectionCount == 0)
        #expect(machine.connectionReleased(id, reusable: true) == [.scheduleIdleTimer(id, generation: 2)])
        #expect(machine.openConnectionCount == 1)
    }

    /// The exchange's fast lease: an idle connection at once, no waiter;
    /// nothing (and no waiter queued) when none is idle or the pool is shutting down.
    @Test func anIdleConnectionIsLeasedAtOnceWithoutAWaiter() {
        var machine = Machine(maxConnectionsPerKey: 4)
        #expect(machine.leaseIdleNow(key: "a") == nil)
        #expect(machine.waiterCount == 0, "a miss queues nothing: the caller then requests")
        let id = establishInUse(&machine, waiter: 1)
        #expect(machine.leaseIdleNow(key: "a") == nil, "in use, not idle")
        _ = machine.connectionReleased(id, reusable: true)
        #expect(machine.leaseIdleNow(key: "a") == id)
        #expect(machine.state(of: id) == .inUse)
        #expect(machine.idleConnectionCount == 0)
        #expect(machine.connectionReleased(id, reusable: true) == [.scheduleIdleTimer(id, generation: 2)], "released as any lease")
        _ = machine.shutdown()
        #expect(machine.leaseIdleNow(key: "a") == nil)
    }

    @Test func idleConnectionsAreReusedLastInFirstOut() {
        var machine = Machine(maxConnectionsPerKey: 4)
        let first = establishInUse(&machine, waiter: 1)
        let second = establishInUse(&machine, waiter: 2)
        _ = machine.connectionReleased(first, reusable: true)
        _ = machine.connectionReleased(second, reusable: true)
        #expect(machine.request(3, key: "a") == [.cancelIdleTimer(second), .useConnection(second, waiter: 3, reused: true)])
    }

    @Test func idleConnectionOnTheCallersEventLoopIsPreferred() {
        var machine = Machine(maxConnectionsPerKey: 4)
        // Connection 0 on loop 7, connection 1 (more recent) on loop 8.
        _ = machine.request(1, key: "a")
        _ = machine.connectionEstablished(0, as: .http1, affinity: 7)
        _ = machine.request(2, key: "a")
        _ = machine.connectionEstablished(1, as: .http1, affinity: 8)
        _ = machine.connectionReleased(0, reusable: true)
        _ = machine.connectionReleased(1, reusable: true)
        #expect(machine.request(3, key: "a", affinity: 7) == [.cancelIdleTimer(0), .useConnection(0, waiter: 3, reused: true)])
        // No connection on loop 9: the most recent idle one.
        #expect(machine.request(4, key: "a", affinity: 9) == [.cancelIdleTimer(1), .useConnection(1, waiter: 4, reused: true)])
    }

    @Test func unreusableReleaseClosesTheConnection() {
        var machine = Machine(maxConnectionsPerKey: 4)
        let id = establishInUse(&machine, waiter: 1)
        #expect(machine.connectionReleased(id, reusable: false) == [.closeConnection(id)])
        #expect(machine.openConnectionCount == 0)
        #expect(machine.keys.isEmpty)
        // The channel's close that follows changes nothing.
        #expect(machine.connectionClosed(id) == [])
    }

    @Test func atTheMaximumRequestsQueueAndAreServedInOrderOnRelease() {
        var machine = Machine(maxConnectionsPerKey: 2)
        let a = establishInUse(&machine, waiter: 1)
        let b = establishInUse(&machine, waiter: 2)
        #expect(machine.request(3, key: "a") == [.scheduleWaiterTimeout(3)])
        #expect(machine.request(4, key: "a") == [.scheduleWaiterTimeout(4)])
        #expect(machine.waiterCount == 2)
        #expect(machine.connectionReleased(b, reusable: true) == [.cancelWaiterTimeout(3), .useConnection(b, waiter: 3, reused: true)])
        #expect(machine.connectionReleased(a, reusable: true) == [.cancelWaiterTimeout(4), .useConnection(a, waiter: 4, reused: true)])
        #expect(machine.waiterCount == 0)
        #expect(machine.openConnectionCount == 2)
    }

    @Test func unreusableReleaseWithWaitersOpensAReplacement() {
        var machine = Machine(maxConnectionsPerKey: 1)
        let a = establishInUse(&machine, waiter: 1)
        #expect(machine.request(2, key: "a") == [.scheduleWaiterTimeout(2)])
        #expect(machine.connectionReleased(a, reusable: false) == [.closeConnection(a), .createConnection(a + 1, "a", .http1)])
        #expect(machine.connectionEstablished(a + 1, as: .http1) == [.cancelWaiterTimeout(2), .useConnection(a + 1, waiter: 2, reused: false)])
    }

    @Test func concurrentRequestsOpenUpToTheMaximum() {
        var machine = Machine(maxConnectionsPerKey: 3)
        var created: [Int] = []
        for waiter in 1...5 {
            for action in machine.request(waiter, key: "a") {
                if case .createConnection(let id, _, .http1) = action { created.append(id) }
            }
        }
        #expect(created == [0, 1, 2])
        #expect(machine.connectingCount == 3)
        #expect(machine.waiterCount == 5)
        // Connections serve waiters first in, first out, whichever connect finishes first.
        #expect(machine.connectionEstablished(2, as: .http1) == [.cancelWaiterTimeout(1), .useConnection(2, waiter: 1, reused: false)])
        #expect(machine.connectionEstablished(0, as: .http1) == [.cancelWaiterTimeout(2), .useConnection(0, waiter: 2, reused: false)])
    }

    @Test func waiterTimesOutWhenNoConnectionIsInFlightForIt() {
        var machine = Machine(maxConnectionsPerKey: 1)
        _ = establishInUse(&machine, waiter: 1)
        _ = machine.request(2, key: "a")
        #expect(machine.waiterTimedOut(2) == [.failWaiter(2, .poolExhausted)])
        #expect(machine.waiterCount == 0)
        // A late timer for a waiter already gone does nothing.
        #expect(machine.waiterTimedOut(2) == [])
    }

    @Test func waiterCoveredByAConnectInFlightKeepsWaiting() {
        var machine = Machine(maxConnectionsPerKey: 2)
        _ = machine.request(1, key: "a")  // opens connection 0
        #expect(machine.waiterTimedOut(1) == [])  // the connect timeout bounds it
        #expect(machine.connectionFailed(0) == [.cancelWaiterTimeout(1), .failWaiter(1, .connectionFailed)])
    }

    @Test func failedConnectFailsTheOldestWaiterAndRetriesForTheRest() {
        var machine = Machine(maxConnectionsPerKey: 1)
        _ = machine.request(1, key: "a")  // connection 0
        _ = machine.request(2, key: "a")  // queued at the maximum
        #expect(machine.connectionFailed(0) == [.cancelWaiterTimeout(1), .failWaiter(1, .connectionFailed), .createConnection(1, "a", .http1)])
        #expect(machine.connectionFailed(1) == [.cancelWaiterTimeout(2), .failWaiter(2, .connectionFailed)])
        #expect(machine.keys.isEmpty)
        #expect(machine.connections.isEmpty)
    }

    @Test func failedConnectWithoutWaitersJustForgetsTheConnection() {
        var machine = Machine(maxConnectionsPerKey: 2)
        _ = machine.request(1, key: "a")
        #expect(machine.waiterCancelled(1) == [.cancelWaiterTimeout(1), .failWaiter(1, .cancelled)])
        #expect(machine.connectionFailed(0) == [])
        #expect(machine.keys.isEmpty)
    }

    @Test func connectionOpenedForACancelledWaiterTurnsIdle() {
        var machine = Machine(maxConnectionsPerKey: 2)
        _ = machine.request(1, key: "a")
        _ = machine.waiterCancelled(1)
        #expect(machine.connectionEstablished(0, as: .http1) == [.scheduleIdleTimer(0, generation: 1)])
        #expect(machine.request(2, key: "a") == [.cancelIdleTimer(0), .useConnection(0, waiter: 2, reused: true)])
    }

    @Test func idleTimeoutClosesOnlyAConnectionStillIdleSinceThatTimer() {
        var machine = Machine(maxConnectionsPerKey: 2)
        let id = establishInUse(&machine, waiter: 1)
        _ = machine.connectionReleased(id, reusable: true)  // generation 1
        _ = machine.request(2, key: "a")
        _ = machine.connectionReleased(id, reusable: true)  // generation 2
        #expect(machine.idleTimeoutFired(id, generation: 1) == [])
        #expect(machine.idleConnectionCount == 1)
        #expect(machine.idleTimeoutFired(id, generation: 2) == [.closeConnection(id)])
        #expect(machine.openConnectionCount == 0)
    }

    @Test func idleTimeoutDoesNothingToAConnectionInUse() {
        var machine = Machine(maxConnectionsPerKey: 2)
        let id = establishInUse(&machine, waiter: 1)
        _ = machine.connectionReleased(id, reusable: true)
        _ = machine.request(2, key: "a")
        #expect(machine.idleTimeoutFired(id, generation: 1) == [])
        #expect(machine.state(of: id) == .inUse)
    }

    @Test func peerClosingAnIdleConnectionRemovesIt() {
        var machine = Machine(maxConnectionsPerKey: 2)
        let id = establishInUse(&machine, waiter: 1)
        _ = machine.connectionReleased(id, reusable: true)
        #expect(machine.connectionClosed(id) == [.cancelIdleTimer(id)])
        #expect(machine.openConnectionCount == 0)
        // The next request opens a new connection instead of reusing a dead one.
        #expect(machine.request(2, key: "a") == [.scheduleWaiterTimeout(2), .createConnection(id + 1, "a", .http1)])
    }

    @Test func connectionClosedWhileInUseFreesItsSlotForWaiters() {
        var machine = Machine(maxConnectionsPerKey: 1)
        let id = establishInUse(&machine, waiter: 1)
        _ = machine.request(2, key: "a")
        #expect(machine.connectionClosed(id) == [.createConnection(id + 1, "a", .http1)])
        // The release the failed exchange reports afterwards is ignored.
        #expect(machine.connectionReleased(id, reusable: false) == [])
    }

    @Test func shutdownFailsWaitersAndClosesEverything() {
        var machine = Machine(maxConnectionsPerKey: 1)
        let busy = establishInUse(&machine, key: "a", waiter: 1)
        let idle = establishInUse(&machine, key: "b", waiter: 2)
        _ = machine.connectionReleased(idle, reusable: true)
        _ = machine.request(3, key: "a")  // queued behind the busy connection
        let actions = machine.shutdown()
        #expect(
            actions == [
                .cancelWaiterTimeout(3), .failWaiter(3, .shuttingDown),
                .closeConnection(busy),
                .cancelIdleTimer(idle), .closeConnection(idle),
                .shutdownCompleted,
            ]
        )
        #expect(machine.openConnectionCount == 0)
        #expect(machine.request(4, key: "a") == [.failWaiter(4, .shuttingDown)])
        #expect(machine.connectionReleased(busy, reusable: true) == [])
        #expect(machine.shutdown() == [])
    }

    @Test func shutdownWaitsForConnectsInFlight() {
        var machine = Machine(maxConnectionsPerKey: 2)
        _ = machine.request(1, key: "a")  // connection 0
        _ = machine.request(2, key: "a")  // connection 1
        #expect(machine.shutdown() == [.cancelWaiterTimeout(1), .failWaiter(1, .shuttingDown), .cancelWaiterTimeout(2), .failWaiter(2, .shuttingDown)])
        #expect(machine.connectionEstablished(0, as: .http1) == [.closeConnection(0)])
        #expect(machine.connectionFailed(1) == [.shutdownCompleted])
    }

    @Test func differentTLSSettingsAreDifferentKeys() throws {
        var machine = PoolStateMachine<UpstreamKey>(maxConnectionsPerKey: 1)
        let pin = try #require(SPKIPin("sha256/" + String(repeating: "A", count: 43) + "="))
        let plain = UpstreamKey(scheme: .https, host: "API.example.com", port: 443, httpVersion: .http1)
        let pinned = UpstreamKey(scheme: .https, host: "api.example.com", port: 443, tls: UpstreamTLSSettings(pins: [pin]), httpVersion: .http1)
        let sameAsPlain = UpstreamKey(scheme: .https, host: "api.example.com", port: 443, tls: .standard, httpVersion: .http1)
        #expect(plain == sameAsPlain)
        #expect(plain.hashValue == sameAsPlain.hashValue, "the hash made once at init agrees with equality")
        #expect(plain != pinned)
        // Plain http ignores TLS settings: equal keys, equal hashes.
        let http = UpstreamKey(scheme: .http, host: "api.example.com", port: 80, tls: UpstreamTLSSettings(pins: [pin]))
        #expect(http == UpstreamKey(scheme: .http, host: "Api.Example.com", port: 80))
        #expect(http.hashValue == UpstreamKey(scheme: .http, host: "api.example.com", port: 80).hashValue)
        #expect(http != UpstreamKey(scheme: .http, host: "api.example.com", port: 8080))

        #expect(machine.request(1, key: plain) == [.scheduleWaiterTimeout(1), .createConnection(0, plain, .http1)])
        _ = machine.connectionEstablished(0, as: .http1)
        _ = machine.connectionReleased(0, reusable: true)
        // The idle connection made without pins is not handed to a pinned request.
        #expect(machine.request(2, key: pinned) == [.scheduleWaiterTimeout(2), .createConnection(1, pinned, .http1)])
        #expect(machine.request(3, key: sameAsPlain) == [.cancelIdleTimer(0), .useConnection(0, waiter: 3, reused: true)])
    }

    @Test func keysAreIndependent() {
        var machine = Machine(maxConnectionsPerKey: 1)
        _ = establishInUse(&machine, key: "a", waiter: 1)
        #expect(machine.request(2, key: "b") == [.scheduleWaiterTimeout(2), .createConnection(1, "b", .http1)])
        #expect(machine.request(3, key: "a") == [.scheduleWaiterTimeout(3)])
    }

    @Test func everyWaiterEndsServedOrFailedUnderRandomEvents() {
        // A small model check: random events never lose a waiter, never exceed
        // the per-key maximum, and never hand one connection to two waiters.
        var generator = SeededRandom(seed: 42)
        for _ in 0..<200 {
            var machine = Machine(maxConnectionsPerKey: 2)
            var waiting = Set<Int>()
            var inUse = [Int: Int]()  // connection -> waiter
            var connecting = Set<Int>()
            var nextWaiter = 0
            func apply(_ actions: [Action]) {
                for action in actions {
                    switch action {
                    case .createConnection(let id, _, .http1): connecting.insert(id)
                    case .useConnection(let id, let waiter, _):
                        #expect(inUse[id] == nil)
                        #expect(waiting.remove(waiter) != nil)
                        inUse[id] = waiter
                    case .failWaiter(let waiter, _): #expect(waiting.remove(waiter) != nil)
                    default: break
                    }
                }
            }
            for _ in 0..<40 {
                switch generator.next() % 6 {
                case 0, 1:
                    nextWaiter += 1
                    waiting.insert(nextWaiter)
                    apply(machine.request(nextWaiter, key: "a"))
                case 2:
                    if let id = connecting.randomElement(using: &generator) {
                        connecting.remove(id)
                        apply(machine.connectionEstablished(id, as: .http1))
                    }
                case 3:
                    if let id = connecting.randomElement(using: &generator) {
                        connecting.remove(id)
                        apply(machine.connectionFailed(id))
                    }
                case 4:
                    if let id = inUse.keys.randomElement(using: &generator) {
                        inUse[id] = nil
                        apply(machine.connectionReleased(id, reusable: generator.next() % 3 != 0))
                    }
                default:
                    if let waiter = waiting.randomElement(using: &generator) {
                        apply(machine.waiterTimedOut(waiter))
                    }
                }
                #expect((machine.keys["a"]?.http1Total ?? 0) <= 2)
            }
            apply(machine.shutdown())
            #expect(waiting.isEmpty)
        }
    }
}
