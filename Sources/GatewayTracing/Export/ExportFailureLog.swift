import NIOConcurrencyHelpers

/// When export failures were last logged, and the spans dropped since: a
/// stopped collector fails every batch, and the log says so once a minute
/// (``SpanExporter``), the count of the spans lost in between on the next line.
final class ExportFailureLog: Sendable {
    private typealias State = (last: ContinuousClock.Instant?, dropped: Int)
    private let state = NIOLockedValueBox<State>((nil, 0))

    /// Nil while a failure was logged less than `interval` ago (the `count`
    /// spans then wait for the next line); else the spans dropped since the
    /// last line, before these.
    func shouldLog(count: Int, now: ContinuousClock.Instant, interval: Duration) -> Int? {
        state.withLockedValue { (s: inout State) -> Int? in
            if let last = s.last, now - last < interval {
                s.dropped += count
                return nil
            }
            let earlier = s.dropped
            s = (now, 0)
            return earlier
        }
    }
}
