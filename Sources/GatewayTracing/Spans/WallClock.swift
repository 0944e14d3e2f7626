import Tracing

/// The exchange's instants (`ContinuousClock`, as the record's timings are
/// kept) as the wall-clock times spans carry: one reading of both clocks,
/// then every instant placed by its distance from it.
struct WallClock: Sendable {
    let wall: UInt64
    let now: ContinuousClock.Instant

    init(wall: UInt64 = DefaultTracerClock.now.nanosecondsSinceEpoch, now: ContinuousClock.Instant = .now) {
        self.wall = wall
        self.now = now
    }

    /// `instant` in nanoseconds since 1970.
    func timestamp(_ instant: ContinuousClock.Instant) -> DefaultTracerClock.Timestamp {
        let (seconds, attoseconds) = (now - instant).components
        let before = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        return DefaultTracerClock.Timestamp(nanosecondsSinceEpoch: UInt64(clamping: Int64(clamping: wall) - before))
    }
}
