import NIOCore
import Synchronization

/// Whether a client connection is an idle keep-alive connection, and since
/// when: written by its handler on its loop (busy when a request head
/// arrives, idle when its exchange ends with the connection kept), read by
/// ``ConnectionTracker`` under its lock when a connection cap is reached, to
/// close the connection idle longest instead of refusing a new one (nginx's
/// `ngx_drain_connections`). Two relaxed stores per request.
final class ConnectionIdleMark: Sendable {
    /// Uptime nanoseconds when it became idle; 0 while busy.
    private let since = Atomic<UInt64>(0)

    init() {}

    /// A request arrived.
    func busy() {
        since.store(0, ordering: .relaxed)
    }

    /// No request in flight from `now`, waiting for the next on a kept connection.
    func idle(at now: NIODeadline) {
        since.store(max(1, now.uptimeNanoseconds), ordering: .relaxed)
    }

    /// When it became idle, or nil while a request is in flight.
    var idleSince: UInt64? {
        let value = since.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }
}
