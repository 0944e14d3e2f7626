import Testing

@testable import GatewayUpstream

/// The pool's decisions for HTTP/2 keys, without sockets: streams leased up
/// to the server's limit, one connection opened at a time and a second only
/// when the first is full, FIFO waiters, GOAWAY.
@Suite("PoolStateMachine: HTTP/2")
struct PoolStateMachineHTTP2Tests {
    typealias Machine = PoolStateMachine<TestKey>
    typealias Action = Machine.Action

    let a = TestKey.h2("a")
    let b = TestKey.h2("b")
    let c0 = 0
    let c1 = 1

    /// Opens `c0` for key "a" through waiter 1 and establishes it with `maxStreams`: waiter 1 has a stream.
    private func establish(_ machine: inout Machine, maxStreams: Int) {
        #expect(machine.request(1, key: a) == [.scheduleWaiterTimeout(1), .createConnection(c0, a, .negotiate)])
        #expect(machine.connectionEstablished(c0, as: .http2(maxStreams: maxStreams)) == [.cancelWaiterTimeout(1), .useStream(c0, waiter: 1, reused: false)])
    }

    @Test func requestsWaitForTheOneConnectionBeingOpenedAndShareIt() {
        var machine = Machine(maxConnectionsPerKey: 4)
        #expect(machine.request(1, key: a) == [.scheduleWaiterTimeout(1), .createConnection(c0, a, .negotiate)])
        #expect(machine.request(2, key: a) == [.scheduleWaiterTimeout(2)], "one connection opened at a time")
        #expect(machine.request(3, key: a) == [.scheduleWaiterTimeout(3)])
        #expect(
            machine.connectionEstablished(c0, as: .http2(maxStreams: 100)) == [
                .cancelWaiterTimeout(1), .useStream(c0, waiter: 1, reused: false),
                .cancelWaiterTimeout(2), .useStream(c0, waiter: 2, reused: true),
                .cancelWaiterTimeout(3), .useStream(c0, waiter: 3, reused: true),
            ],
            "connect and TLS phases go to the first stream only"
        )
        #expect(machine.connection(c0)?.streamsInUse == 3)
        #expect(machine.openConnectionCount == 1)
        #expect(machine.request(4, key: a) == [.useStream(c0, waiter: 4, reused: true)], "a free stream: at once")
    }

    /// A free stream is taken at once without a waiter, but never before
    /// requests already waiting, nor from a full connection or a shutting-down pool.
    @Test func aFreeStreamIsLeasedAtOnceOnlyWhenNobodyWaits() {
        var machine = Machine(maxConnectionsPerKey: 1)
        #expect(machine.leaseStreamNow(key: a) == nil, "no connection yet")
        establish(&machine, maxStreams: 2)
        let first = machine.leaseStreamNow(key: a)
        #expect(first?.id == c0 && first?.wasIdle == false)
        #expect(machine.connection(c0)?.streamsInUse == 2)
        #expect(machine.leaseStreamNow(key: a) == nil, "full")
        #expect(machine.request(3, key: a) == [.scheduleWaiterTimeout(3)])
        _ = machine.streamClosed(c0)  // serves waiter 3
        _ = machine.streamClosed(c0)
        #expect(machine.request(4, key: a) == [.useStream(c0, waiter: 4, reused: true)])
        #expect(machine.request(5, key: a) == [.scheduleWaiterTimeout(5)])
        #expect(machine.leaseStreamNow(key: a) == nil, "waiter 5 goes first")
    }

    @Test func aSecondConnectionOpensOnlyWhenTheFirstIsFull() {
        var machine = Machine(maxConnectionsPerKey: 4)
        establish(&machine, maxStreams: 2)
        #expect(machine.request(2, key: a) == [.useStream(c0, waiter: 2, reused: true)])
        #expect(machine.request(3, key: a) == [.scheduleWaiterTimeout(3), .createConnection(c1, a, .negotiate)])
        #expect(machine.request(4, key: a) == [.scheduleWaiterTimeout(4)])
        #expect(
            machine.connectionEstablished(c1, as: .http2(maxStreams: 2)) == [
                .cancelWaiterTimeout(3), .useStream(c1, waiter: 3, reused: false),
                .cancelWaiterTimeout(4), .useStream(c1, waiter: 4, reused: true),
            ])
        // A free stream on both: the oldest connection's first.
        _ = machine.streamClosed(c0)
        _ = machine.streamClosed(c1)
        #expect(machine.request(5, key: a) == [.useStream(c0, waiter: 5, reused: true)])
    }

    @Test func noConnectionBeyondTheKeysLimit() {
        var machine = Machine(maxConnectionsPerKey: 1)
        establish(&machine, maxStreams: 1)
        #expect(machine.request(2, key: a) == [.scheduleWaiterTimeout(2)])
        #expect(machine.request(3, key: b) == [.scheduleWaiterTimeout(3), .createConnection(c1, b, .negotiate)], "another key has its own limit")
    }

    @Test func waitersAreServedInOrderAsStreamsEnd() {
        var machine = Machine(maxConnectionsPerKey: 1)
        establish(&machine, maxStreams: 1)
        _ = machine.request(2, key: a)
        _ = machine.request(3, key: a)
        #expect(machine.streamClosed(c0) == [.cancelWaiterTimeout(2), .useStream(c0, waiter: 2, reused: true)])
        #expect(machine.streamClosed(c0) == [.cancelWaiterTimeout(3), .useStream(c0, waiter: 3, reused: true)])
        #expect(machine.streamClosed(c0) == [.scheduleIdleTimer(c0, generation: 1)])
        #expect(machine.idleConnectionCount == 1)
        #expect(machine.streamClosed(c0) == [], "no stream in use: nothing to free")
    }

    /// A stream the server refused (REFUSED_STREAM, or above a GOAWAY's last
    /// stream id) fails its attempt, which is safe to retry; its slot serves the next waiter.
    @Test func aRefusedStreamFreesItsSlotForTheNextWaiter() {
        var machine = Machine(maxConnectionsPerKey: 1)
        establish(&machine, maxStreams: 1)
        _ = machine.request(2, key: a)
        #expect(machine.streamClosed(c0) == [.cancelWaiterTimeout(2), .useStream(c0, waiter: 2, reused: true)])
    }

    @Test func anIdleConnectionIsReusedAndClosedAfterItsIdleTimeout() {
        var machine = Machine(maxConnectionsPerKey: 4)
        establish(&machine, maxStreams: 10)
        #expect(machine.streamClosed(c0) == [.scheduleIdleTimer(c0, generation: 1)])
        #expect(machine.request(2, key: a) == [.cancelIdleTimer(c0), .useStream(c0, waiter: 2, reused: true)])
        #expect(machine.streamClosed(c0) == [.scheduleIdleTimer(c0, generation: 2)])
        #expect(machine.idleTimeoutFired(c0, generation: 1) == [], "a stale timer")
        #expect(machine.idleTimeoutFired(c0, generation: 2) == [.closeConnection(c0)])
        #expect(machine.openConnectionCount == 0)
        #expect(machine.keys.isEmpty)
    }

    @Test func goAwayDrainsTheConnectionAndANewOneServesLaterRequests() {
        var machine = Machine(maxConnectionsPerKey: 1)
        establish(&machine, maxStreams: 10)
        _ = machine.request(2, key: a)
        #expect(machine.goAwayReceived(c0) == [])
        #expect(machine.connection(c0)?.state == .draining)
        #expect(
            machine.request(3, key: a) == [.scheduleWaiterTimeout(3), .createConnection(c1, a, .negotiate)],
            "a draining connection takes no stream and does not count against the limit"
        )
        #expect(machine.streamClosed(c0) == [])
        #expect(machine.streamClosed(c0) == [.closeConnection(c0)], "closed with its last stream")
        #expect(machine.connectionEstablished(c1, as: .http2(maxStreams: 10)) == [.cancelWaiterTimeout(3), .useStream(c1, waiter: 3, reused: false)])
    }

    @Test func goAwayOnAnIdleConnectionClosesItAtOnce() {
        var machine = Machine(maxConnectionsPerKey: 1)
        establish(&machine, maxStreams: 10)
        _ = machine.streamClosed(c0)
        #expect(machine.goAwayReceived(c0) == [.cancelIdleTimer(c0), .closeConnection(c0)])
        #expect(machine.openConnectionCount == 0)
    }

    @Test func aRaisedStreamLimitServesWaiters() {
        var machine = Machine(maxConnectionsPerKey: 1)
        establish(&machine, maxStreams: 1)
        _ = machine.request(2, key: a)
        #expect(machine.maxStreamsChanged(c0, maxStreams: 2) == [.cancelWaiterTimeout(2), .useStream(c0, waiter: 2, reused: true)])
        #expect(machine.maxStreamsChanged(c0, maxStreams: 1) == [], "streams above a lowered limit run to their end")
    }

    @Test func aFailedConnectFailsTheWaitersItWasOpenedFor() {
        var machine = Machine(maxConnectionsPerKey: 4)
        _ = machine.request(1, key: a)
        _ = machine.request(2, key: a)
        #expect(
            machine.connectionFailed(c0) == [
                .cancelWaiterTimeout(1), .failWaiter(1, .connectionFailed),
                .cancelWaiterTimeout(2), .failWaiter(2, .connectionFailed),
            ])
        #expect(machine.keys.isEmpty)
    }

    @Test func aWaiterTimesOutUnlessAConnectionIsBeingOpenedForIt() {
        var machine = Machine(maxConnectionsPerKey: 1)
        _ = machine.request(1, key: a)
        _ = machine.request(2, key: a)
        #expect(machine.waiterTimedOut(2) == [], "it waits for the connection being opened")
        #expect(
            machine.connectionEstablished(c0, as: .http2(maxStreams: 1)) == [
                .cancelWaiterTimeout(1), .useStream(c0, waiter: 1, reused: false), .failWaiter(2, .poolExhausted),
            ], "not served by it: it fails then")
        #expect(machine.request(3, key: a) == [.scheduleWaiterTimeout(3)])
        #expect(machine.waiterTimedOut(3) == [.failWaiter(3, .poolExhausted)])
        #expect(machine.waiterCancelled(3) == [], "already gone")
    }

    @Test func aCancelledWaiterLeavesTheQueue() {
        var machine = Machine(maxConnectionsPerKey: 1)
        establish(&machine, maxStreams: 1)
        _ = machine.request(2, key: a)
        _ = machine.request(3, key: a)
        #expect(machine.waiterCancelled(2) == [.cancelWaiterTimeout(2), .failWaiter(2, .cancelled)])
        #expect(machine.streamClosed(c0) == [.cancelWaiterTimeout(3), .useStream(c0, waiter: 3, reused: true)])
    }

    @Test func shutdownFailsWaitersAndClosesConnections() {
        var machine = Machine(maxConnectionsPerKey: 2)
        establish(&machine, maxStreams: 1)
        #expect(machine.request(2, key: a) == [.scheduleWaiterTimeout(2), .createConnection(c1, a, .negotiate)])
        #expect(machine.shutdown() == [.cancelWaiterTimeout(2), .failWaiter(2, .shuttingDown), .closeConnection(c0)])
        #expect(machine.streamClosed(c0) == [], "already forgotten")
        #expect(machine.connectionEstablished(c1, as: .http2(maxStreams: 1)) == [.closeConnection(c1), .shutdownCompleted])
        #expect(machine.request(3, key: a) == [.failWaiter(3, .shuttingDown)])
    }
}
