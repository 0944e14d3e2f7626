import NIOConcurrencyHelpers
import Prometheus

/// Makes Prometheus handles for the families of `MetricFamily`, always with the
/// family's help text, buckets and label order, and remembers which families
/// have a series, so that the exposition can announce the others (HELP and
/// TYPE with no sample) and every family is listed from the first scrape on.
struct MetricHandleFactory: Sendable {
    let registry: PrometheusCollectorRegistry
    private let familiesWithSeries = NIOLockedValueBox<Set<String>>([])
    private let histograms = HistogramSeries()

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    func counter(_ family: MetricFamily, _ values: [String]) -> Counter {
        precondition(family.kind == .counter)
        noteSeries(family)
        return values.isEmpty
            ? registry.makeCounter(descriptor: family.descriptor)
            : registry.makeCounter(descriptor: family.descriptor, labels: family.labels(values))
    }

    func gauge(_ family: MetricFamily, _ values: [String]) -> Gauge {
        precondition(family.kind == .gauge)
        noteSeries(family)
        return values.isEmpty
            ? registry.makeGauge(descriptor: family.descriptor)
            : registry.makeGauge(descriptor: family.descriptor, labels: family.labels(values))
    }

    /// The family's series for `values` (the same one for the same values), ours
    /// rather than the registry's: see ``LatencyHistogram``.
    func histogram(_ family: MetricFamily, _ values: [String]) -> LatencyHistogram {
        precondition(family.kind == .histogram)
        noteSeries(family)
        return histograms.series(family, values)
    }

    /// Marked before the series is made: a scrape in between misses the family
    /// once rather than announcing it twice.
    private func noteSeries(_ family: MetricFamily) {
        _ = familiesWithSeries.withLockedValue { $0.insert(family.name) }
    }

    /// The registry's exposition, then HELP and TYPE of families with no series yet.
    func exposition() -> [UInt8] {
        let announced = familiesWithSeries.withLockedValue { $0 }
        var buffer = registry.emitToBuffer()
        histograms.emit(into: &buffer)
        for family in MetricFamily.all where !announced.contains(family.name) {
            buffer.append(contentsOf: "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) \(family.kind.rawValue)\n".utf8)
        }
        return buffer
    }
}

/// Handles of one family keyed by label values, made on first use.
final class LabeledHandles<Handle: AnyObject & Sendable>: Sendable {
    private let handles = NIOLockedValueBox<[[String]: Handle]>([:])
    private let make: @Sendable ([String]) -> Handle

    init(make: @escaping @Sendable ([String]) -> Handle) {
        self.make = make
    }

    func get(_ values: [String]) -> Handle {
        if let handle = handles.withLockedValue({ $0[values] }) { return handle }
        // Made outside the lock; the registry returns the same handle for the same labels.
        let handle = make(values)
        return handles.withLockedValue { h in
            if let existing = h[values] { return existing }
            h[values] = handle
            return handle
        }
    }
}
