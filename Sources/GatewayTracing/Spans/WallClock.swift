import GatewayCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// The exchange's instants (`ContinuousClock`, as the record's timings are
/// kept) as the wall-clock times spans carry: one reading of both clocks,
/// then every instant placed by its distance from it.
struct WallClock: Sendable {
    /// Nanoseconds since 1970 at `now`.
    let wall: UInt64
    let now: StoredInstant

    init(wall: UInt64 = WallClock.nanosecondsSinceEpoch(), now: StoredInstant) {
        self.wall = wall
        self.now = now
    }

    /// `instant` in nanoseconds since 1970.
    func timestamp(_ instant: ContinuousClock.Instant) -> UInt64 {
        timestamp(StoredInstant(instant))
    }

    /// `instant` in nanoseconds since 1970.
    func timestamp(_ instant: StoredInstant) -> UInt64 {
        let (seconds, attoseconds) = (now - instant).components
        let before = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        return UInt64(clamping: Int64(clamping: wall) - before)
    }

    /// The system's real-time clock, in nanoseconds since 1970.
    static func nanosecondsSinceEpoch() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
