import Testing

@testable import GatewayUpstream

/// An `auto` key, without sockets: its first connection is opened alone and
/// its ALPN decides what the key speaks; the hand-over happens in the machine,
/// with one waiter queue and one id space for both protocols.
@Suite("PoolStateMachine: negotiation")
struct PoolStateMachineNegotiationTests {
    typealias Machine = PoolStateMachine<TestKey>

    let key = TestKey.auto("a")

    /// Waiters 1...`count` for the auto key: one connection (id 0) being opened for all of them.
    private func waiting(_ machine: inout Machine, count: Int) {
        #expect(machine.request(1, key: key) == [.scheduleWaiterTimeout(1), .createConnection(0, key, .negotiate)])
        for waiter in 2...max(2, count) where waiter <= count {
            #expect(machine.request(waiter, key: key) == [.scheduleWaiterTimeout(waiter)], "one connection negotiates at a time")
        }
        #expect(machine.mode(of: key) == .negotiating)
    }

    @Test func negotiatedHTTP2TheWaitersShareItsStreams() {
        var machine = Machine(maxConnectionsPerKey: 4)
        waiting(&machine, count: 3)
        #expect(
            machine.connectionEstablished(0, as: .http2(maxStreams: 100)) == [
                .cancelWaiterTimeout(1), .useStream(0, waiter: 1, reused: false),
                .cancelWaiterTimeout(2), .useStream(0, waiter: 2, reused: true),
                .cancelWaiterTimeout(3), .useStream(0, waiter: 3, reused: true),
            ])
        #expect(machine.mode(of: key) == .http2)
        #expect(machine.request(4, key: key) == [.useStream(0, waiter: 4, reused: true)])
        #expect(machine.http2ConnectionCount == 1)
    }

    @Test func negotiatedHTTP1TheOldestWaiterGetsItAndTheOthersGetConnectionsOfTheirOwn() {
        var machine = Machine(maxConnectionsPerKey: 4)
        waiting(&machine, count: 3)
        #expect(
            machine.connectionEstablished(0, as: .http1, affinity: 7) == [
                .cancelWaiterTimeout(1), .useConnection(0, waiter: 1, reused: false),
                .createConnection(1, key, .http1), .createConnection(2, key, .http1),
            ], "the hand-over: in use by the waiter that waited for it; HTTP/1.1-only connections for the rest")
        #expect(machine.mode(of: key) == .http1)
        #expect(machine.speaksHTTP1(key))
        #expect(machine.state(of: 0) == .inUse)
        #expect(machine.waiterCount == 2, "still in the one queue, their timers running")
        #expect(machine.connectionEstablished(2, as: .http1) == [.cancelWaiterTimeout(2), .useConnection(2, waiter: 2, reused: false)])
        // Released with a waiter left: it serves that waiter, as any HTTP/1.1 connection.
        #expect(machine.connectionReleased(0, reusable: true) == [.cancelWaiterTimeout(3), .useConnection(0, waiter: 3, reused: true)])
        #expect(machine.connectionEstablished(1, as: .http1) == [.scheduleIdleTimer(1, generation: 1)])
        #expect(machine.leaseIdleNow(key: key, affinity: 7) == 1, "the fast lease works for it as for any HTTP/1.1 key")
    }

    @Test func aKeyRememberedAsHTTP1OpensHTTP1ConnectionsWhenItComesBack() {
        var machine = Machine(maxConnectionsPerKey: 4)
        waiting(&machine, count: 1)
        _ = machine.connectionEstablished(0, as: .http1)
        #expect(machine.connectionReleased(0, reusable: false) == [.closeConnection(0)])
        #expect(machine.keys.isEmpty, "the key's state is gone")
        #expect(machine.request(2, key: key) == [.scheduleWaiterTimeout(2), .createConnection(1, key, .http1)])
        #expect(machine.mode(of: key) == .http1)
    }

    @Test func theKeysRememberedAsHTTP1AreBounded() {
        var machine = Machine(maxConnectionsPerKey: 1)
        for index in 0...Machine.http1KeyLimit {
            let actions = machine.request(index, key: .auto("k\(index)"))
            guard case .createConnection(let id, _, .negotiate) = actions.last else {
                Issue.record("expected a new connection, got \(actions)")
                return
            }
            _ = machine.connectionEstablished(id, as: .http1)
        }
        #expect(!machine.speaksHTTP1(.auto("k0")), "the set started over")
        #expect(machine.speaksHTTP1(.auto("k\(Machine.http1KeyLimit)")))
    }

    /// A waiter whose timeout fired while the first connection negotiated keeps
    /// waiting only if a connection being opened will serve it.
    @Test func atTheHandOverAnOverdueWaiterNoConnectionWillServeFails() {
        var machine = Machine(maxConnectionsPerKey: 2)
        waiting(&machine, count: 3)
        #expect(machine.waiterTimedOut(2) == [])
        #expect(machine.waiterTimedOut(3) == [])
        #expect(
            machine.connectionEstablished(0, as: .http1) == [
                .cancelWaiterTimeout(1), .useConnection(0, waiter: 1, reused: false),
                .createConnection(1, key, .http1),
                .failWaiter(3, .poolExhausted),
            ])
        #expect(machine.waiterCount == 1)
        #expect(machine.connectionFailed(1) == [.cancelWaiterTimeout(2), .failWaiter(2, .connectionFailed)])
    }

    @Test func aFailedNegotiationFailsEveryWaiterAndTheNextRequestTriesAgain() {
        var machine = Machine(maxConnectionsPerKey: 4)
        waiting(&machine, count: 2)
        #expect(
            machine.connectionFailed(0) == [
                .cancelWaiterTimeout(1), .failWaiter(1, .connectionFailed),
                .cancelWaiterTimeout(2), .failWaiter(2, .connectionFailed),
            ])
        #expect(machine.keys.isEmpty)
        #expect(machine.request(3, key: key) == [.scheduleWaiterTimeout(3), .createConnection(1, key, .negotiate)])
    }

    /// A server that answers `http/1.1` to a key in HTTP/2: its new connection
    /// is handed over the same way, and the key speaks HTTP/1.1 from then on.
    @Test func anHTTP2KeyWhoseServerAnswersHTTP1IsHandedOver() {
        let h2 = TestKey.h2("b")
        var machine = Machine(maxConnectionsPerKey: 2)
        _ = machine.request(1, key: h2)
        #expect(machine.connectionEstablished(0, as: .http1) == [.cancelWaiterTimeout(1), .useConnection(0, waiter: 1, reused: false)])
        #expect(machine.mode(of: h2) == .http1)
        #expect(machine.request(2, key: h2) == [.scheduleWaiterTimeout(2), .createConnection(1, h2, .http1)])
    }

    @Test func connectionsOfBothProtocolsShareOneIdSpace() {
        var machine = Machine(maxConnectionsPerKey: 1)
        #expect(machine.request(1, key: "one") == [.scheduleWaiterTimeout(1), .createConnection(0, "one", .http1)])
        #expect(machine.request(2, key: .h2("two")) == [.scheduleWaiterTimeout(2), .createConnection(1, .h2("two"), .negotiate)])
        #expect(machine.request(3, key: key) == [.scheduleWaiterTimeout(3), .createConnection(2, key, .negotiate)])
        _ = machine.connectionEstablished(2, as: .http1)
        #expect(machine.state(of: 2) == .inUse, "an HTTP/1.1 connection under the number it was opened with")
    }

    @Test func shutdownClosesConnectionsOfBothProtocolsAndCompletesOnce() {
        var machine = Machine(maxConnectionsPerKey: 2)
        _ = machine.request(1, key: "one")
        _ = machine.connectionEstablished(0, as: .http1)
        _ = machine.connectionReleased(0, reusable: true)
        _ = machine.request(2, key: .h2("two"))
        _ = machine.connectionEstablished(1, as: .http2(maxStreams: 10))
        _ = machine.request(3, key: key)
        #expect(
            machine.shutdown() == [
                .cancelWaiterTimeout(3), .failWaiter(3, .shuttingDown),
                .cancelIdleTimer(0), .closeConnection(0),
                .closeConnection(1),
            ], "the negotiating connection is closed when it completes")
        #expect(machine.connectionEstablished(2, as: .http2(maxStreams: 10)) == [.closeConnection(2), .shutdownCompleted])
        #expect(machine.streamClosed(1) == [])
        #expect(machine.shutdown() == [])
    }
}
