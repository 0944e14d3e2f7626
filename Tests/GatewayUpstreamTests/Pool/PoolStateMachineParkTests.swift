import GatewayCore
import Testing

@testable import GatewayUpstream

/// The release fast path (issue 14): a reusable connection nobody waits for
/// turns idle at once, with no action list, exactly as `connectionReleased`
/// would park it; in every other case it declines and changes nothing.
@Suite("PoolStateMachine: park idle now")
struct PoolStateMachineParkTests {
    typealias Machine = PoolStateMachine<TestKey>

    /// A connection for `key`, established and in use by `waiter`.
    private func inUse(_ machine: inout Machine, key: TestKey = "a", waiter: Int) -> Int {
        let actions = machine.request(waiter, key: key)
        guard case .createConnection(let id, _, .http1) = actions.last else {
            Issue.record("expected a new connection, got \(actions)")
            return -1
        }
        _ = machine.connectionEstablished(id, as: .http1)
        return id
    }

    @Test func withNoWaiterTheConnectionTurnsIdleAsConnectionReleasedWouldPark() {
        var fast = Machine(maxConnectionsPerKey: 4)
        var slow = Machine(maxConnectionsPerKey: 4)
        let id = inUse(&fast, waiter: 1)
        _ = inUse(&slow, waiter: 1)
        #expect(fast.parkIdleNow(id) == 1)
        #expect(slow.connectionReleased(id, reusable: true) == [.scheduleIdleTimer(id, generation: 1)])
        #expect(fast.state(of: id) == .idle(generation: 1) && slow.state(of: id) == .idle(generation: 1))
        #expect(fast.idleConnectionCount == 1 && fast.openConnectionCount == 1 && fast.waiterCount == 0)
        // Leased and released again: the next idle period has the next generation.
        #expect(fast.leaseIdleNow(key: "a") == id)
        #expect(fast.parkIdleNow(id) == 2)
        #expect(fast.request(2, key: "a") == [.cancelIdleTimer(id), .useConnection(id, waiter: 2, reused: true)])
    }

    @Test func aWaitingRequestIsLeftToConnectionReleased() {
        var machine = Machine(maxConnectionsPerKey: 1)
        let id = inUse(&machine, waiter: 1)
        #expect(machine.request(2, key: "a") == [.scheduleWaiterTimeout(2)])
        #expect(machine.parkIdleNow(id) == nil)
        #expect(machine.state(of: id) == .inUse && machine.waiterCount == 1, "nothing changed")
        #expect(machine.connectionReleased(id, reusable: true) == [.cancelWaiterTimeout(2), .useConnection(id, waiter: 2, reused: true)])
    }

    @Test func declinesWhileShuttingDownAndForConnectionsNotInUse() {
        var machine = Machine(maxConnectionsPerKey: 4)
        #expect(machine.parkIdleNow(42) == nil, "unknown connection")
        let id = inUse(&machine, waiter: 1)
        #expect(machine.parkIdleNow(id) == 1)
        #expect(machine.parkIdleNow(id) == nil, "already idle")
        #expect(machine.state(of: id) == .idle(generation: 1))
        _ = machine.request(2, key: "b")
        let connecting = machine.connectingCount
        #expect(connecting == 1)
        #expect(machine.parkIdleNow(1) == nil, "still connecting")
        let other = inUse(&machine, key: "c", waiter: 3)
        _ = machine.shutdown()
        #expect(machine.parkIdleNow(other) == nil, "shutting down: connectionReleased closes it")
    }
}
