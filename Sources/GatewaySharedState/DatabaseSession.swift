import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO

/// A pooled connection lent to one operation, watched: the database must
/// answer within `query_timeout`, or the connection is closed. Closing it fails
/// the statement waiting on it and the pool drops the connection, so a
/// database that stops answering (a network partition, a server frozen, a lock
/// held elsewhere) costs one `query_timeout`, not a stalled limiter, token
/// refresh or sync loop.
///
/// The watch runs from the moment the connection is lent. An operation that
/// waits for something the database itself bounds gives it more time
/// (``allow(_:)``: the row lock of a refresh, bounded by `lock_timeout`); one
/// that waits for something else stops the watch meanwhile (``unwatched(_:)``:
/// the token call of a refresh, bounded by the token endpoint's timeout).
final class DatabaseSession: Sendable {
    let connection: PostgresConnection
    /// `query_timeout`.
    let limit: Duration
    private let watch = NIOLockedValueBox(Watch())

    private struct Watch {
        var timer: Scheduled<Void>?
        /// Which start of the watch `timer` belongs to (a cancelled timer may still fire).
        var generation = 0
        /// The close the watch started when it ran out (nil while it has not).
        var closing: EventLoopFuture<Void>?
    }

    init(connection: PostgresConnection, limit: Duration) {
        self.connection = connection
        self.limit = limit
    }

    /// (Re)starts the watch: the database must answer within `limit` plus `extra`.
    func allow(_ extra: Duration = .zero) {
        let connection = self.connection
        let delay = TimeAmount(limit + extra)
        watch.withLockedValue { watch in
            guard watch.closing == nil else { return }
            watch.timer?.cancel()
            watch.generation += 1
            let generation = watch.generation
            watch.timer = connection.eventLoop.scheduleTask(in: delay) { [weak self] in
                self?.expire(generation)
            }
        }
    }

    /// Runs `body` (which does not use the connection) with the watch stopped; restarts it after.
    func unwatched<Result>(_ body: () async throws -> Result) async rethrows -> Result {
        stop()
        defer { allow() }
        return try await body()
    }

    /// Stops the watch (the operation is over).
    func stop() {
        watch.withLockedValue { watch in
            watch.timer?.cancel()
            watch.timer = nil
        }
    }

    /// Whether the watch ran out (once the close it started is done: the pool
    /// must see the connection closed before it gets it back, or it lends it again).
    func settled() async -> Bool {
        let closing = watch.withLockedValue { $0.closing }
        guard let closing else { return false }
        try? await closing.get()
        return true
    }

    private func expire(_ generation: Int) {
        let connection = self.connection
        let closed = connection.eventLoop.makePromise(of: Void.self)
        let fire = watch.withLockedValue { watch -> Bool in
            guard watch.timer != nil, watch.generation == generation, watch.closing == nil else { return false }
            watch.timer = nil
            watch.closing = closed.futureResult
            return true
        }
        // Closed outside the lock: closing fires the pool's and the statement's callbacks.
        if fire { connection.close().cascade(to: closed) } else { closed.succeed() }
    }
}
