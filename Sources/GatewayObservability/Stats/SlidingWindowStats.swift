import Histogram

/// Exact latency percentiles of one endpoint over a sliding window: the window
/// is cut into `sliceCount` time slices (5 minutes = 10 × 30 s by default), each
/// with its own HdrHistogram; a read merges the live slices. A slice is
/// allocated when the first request of its time lands in it, and reused (reset)
/// when time wraps around the ring, so an idle endpoint holds no histogram.
///
/// Latencies are recorded in microseconds with two significant digits (HdrHistogram
/// keeps every value within 1 % of what was recorded); the maximum is exact.
/// A value type with no clock: callers pass `now`, so tests control time.
struct SlidingWindowStats: Sendable {
    typealias Instant = ContinuousClock.Instant

    struct Slice: Sendable {
        var epoch: Int
        var histogram: Histogram<UInt32>
        var count = 0
        var failures = 0
        var retries = 0
        var maxMicros: UInt64 = 0

        init(epoch: Int) {
            self.epoch = epoch
            self.histogram = SlidingWindowStats.makeHistogram()
        }

        /// One exchange, in the slice of `epoch` (reset first if it held an older one).
        mutating func record(_ micros: UInt64, failed: Bool, retries: Int, epoch: Int) {
            if self.epoch != epoch { reset(epoch: epoch) }
            histogram.record(micros)
            count += 1
            if failed { failures += 1 }
            self.retries += retries
            maxMicros = max(maxMicros, micros)
        }

        mutating func reset(epoch: Int) {
            self.epoch = epoch
            histogram.reset()
            count = 0
            failures = 0
            retries = 0
            maxMicros = 0
        }
    }

    let origin: Instant
    let sliceNanoseconds: Int64
    let sliceCount: Int
    private var slices: [Slice?]

    /// - Parameters:
    ///   - window: the whole window (at least `sliceCount` nanoseconds).
    ///   - origin: when time starts (the gateway's start): slice 0 begins here.
    init(window: Duration, sliceCount: Int = 10, origin: Instant) {
        precondition(sliceCount >= 1)
        self.origin = origin
        self.sliceCount = sliceCount
        self.sliceNanoseconds = max(1, window.nanoseconds / Int64(sliceCount))
        self.slices = Array(repeating: nil, count: sliceCount)
    }

    static func makeHistogram() -> Histogram<UInt32> {
        Histogram<UInt32>(numberOfSignificantValueDigits: .two)
    }

    var window: Duration { .nanoseconds(sliceNanoseconds * Int64(sliceCount)) }

    /// The slice number `now` falls in (0 from `origin`).
    func epoch(at now: Instant) -> Int {
        Int(max(0, (now - origin).nanoseconds) / sliceNanoseconds)
    }

    mutating func record(latency: Duration, failed: Bool, retries: Int, at now: Instant) {
        let epoch = epoch(at: now)
        let index = epoch % sliceCount
        let micros = UInt64(max(0, latency.nanoseconds) / 1000)
        // Changed in place in the ring (no copy of the slice and its histogram).
        if slices[index] == nil { slices[index] = Slice(epoch: epoch) }
        slices[index]!.record(micros, failed: failed, retries: retries, epoch: epoch)
    }

    /// The live slices (newer than `now - window`), oldest first.
    private func liveSlices(at now: Instant) -> [Slice] {
        let current = epoch(at: now)
        return slices.compactMap { $0 }
            .filter { $0.epoch <= current && $0.epoch > current - sliceCount && $0.count > 0 }
            .sorted { $0.epoch < $1.epoch }
    }

    /// Merges the live slices.
    func snapshot(at now: Instant) -> WindowSnapshot {
        let live = liveSlices(at: now)
        var merged = Self.makeHistogram()
        var snapshot = WindowSnapshot()
        let current = epoch(at: now)
        for slice in live {
            merged.add(slice.histogram)
            snapshot.count += slice.count
            snapshot.failures += slice.failures
            snapshot.retries += slice.retries
            snapshot.maxMicros = max(snapshot.maxMicros, slice.maxMicros)
            snapshot.slices.append(
                WindowSnapshot.SliceSummary(
                    age: current - slice.epoch,
                    count: slice.count,
                    p50Micros: slice.histogram.valueAtPercentile(50),
                    p95Micros: slice.histogram.valueAtPercentile(95)
                )
            )
        }
        if snapshot.count > 0 {
            snapshot.p50Micros = min(merged.valueAtPercentile(50), snapshot.maxMicros)
            snapshot.p95Micros = min(merged.valueAtPercentile(95), snapshot.maxMicros)
            snapshot.p99Micros = min(merged.valueAtPercentile(99), snapshot.maxMicros)
        }
        snapshot.covered = covered(at: now)
        return snapshot
    }

    /// How much time the live slices span: the full slices before the current
    /// one plus the elapsed part of the current one, never more than the time
    /// since `origin`, never less than a second (so a first request is not 1000 rps).
    func covered(at now: Instant) -> Duration {
        let elapsed = max(0, (now - origin).nanoseconds)
        let current = Int64(epoch(at: now))
        let intoCurrent = elapsed - current * sliceNanoseconds
        let full = min(current, Int64(sliceCount - 1)) * sliceNanoseconds
        return .nanoseconds(max(1_000_000_000, full + intoCurrent))
    }
}

/// What one endpoint did within the window.
struct WindowSnapshot: Sendable, Equatable {
    struct SliceSummary: Sendable, Equatable {
        /// Slices before the current one (0 = the current slice).
        var age: Int
        var count: Int
        var p50Micros: UInt64
        var p95Micros: UInt64
    }

    var count = 0
    var failures = 0
    var retries = 0
    var p50Micros: UInt64 = 0
    var p95Micros: UInt64 = 0
    var p99Micros: UInt64 = 0
    var maxMicros: UInt64 = 0
    var covered: Duration = .zero
    var slices: [SliceSummary] = []
}

extension Duration {
    /// The whole duration in nanoseconds (saturating far beyond any latency).
    var nanoseconds: Int64 {
        let c = components
        let (scaled, overflow) = c.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return c.seconds < 0 ? .min : .max }
        return scaled + c.attoseconds / 1_000_000_000
    }
}
