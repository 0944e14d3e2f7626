public import NIOCore

/// At most one log line per ``interval`` for a condition that can repeat on
/// every connection (a failing accept path, a connection cap reached): the
/// first is logged, the ones after it within the interval are counted, and
/// the next line logged says how many were not.
///
/// Not synchronized: kept by one event loop, or under its owner's lock.
public struct LogRateLimiter: Sendable {
    public let interval: TimeAmount
    private var lastLogged: NIODeadline?
    private var unlogged = 0

    public init(interval: TimeAmount = .seconds(10)) {
        self.interval = interval
    }

    /// Whether to log now; if so, how many were not logged since the last line.
    public mutating func admit(now: NIODeadline = .now()) -> Int? {
        if let lastLogged, now - lastLogged < interval {
            unlogged += 1
            return nil
        }
        defer { unlogged = 0 }
        lastLogged = now
        return unlogged
    }

    /// `" (and N more since the last such line)"`, or nothing for none.
    public static func more(_ unlogged: Int) -> String {
        unlogged > 0 ? " (and \(unlogged) more since the last such line)" : ""
    }
}
