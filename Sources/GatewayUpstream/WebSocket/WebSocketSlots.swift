import NIOConcurrencyHelpers

/// The open WebSocket connections per upstream host and port. Each WebSocket
/// has a connection of its own, outside the pool and its
/// `max_connections_per_host`, for as long as it lives: without a bound one
/// client could hold a thousand connections to one origin. A handshake takes a
/// slot before it connects (or is refused: 503 naming
/// `pool.max_websockets_per_host`) and gives it back when its connection closes.
final class WebSocketSlots: Sendable {
    private let open = NIOLockedValueBox<[String: Int]>([:])

    init() {}

    /// Takes a slot for `key` unless `limit` are taken.
    func take(_ key: String, limit: Int) -> Bool {
        open.withLockedValue { open in
            let count = open[key, default: 0]
            guard count < limit else { return false }
            open[key] = count + 1
            return true
        }
    }

    func give(_ key: String) {
        open.withLockedValue { open in
            let left = open[key, default: 1] - 1
            open[key] = left > 0 ? left : nil
        }
    }

    /// Open WebSockets to `key`.
    func count(_ key: String) -> Int {
        open.withLockedValue { $0[key, default: 0] }
    }
}
