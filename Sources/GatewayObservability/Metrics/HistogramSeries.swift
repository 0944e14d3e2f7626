import NIOConcurrencyHelpers

/// The gateway's own histogram series (``LatencyHistogram``), by family and
/// label values, in the order they were made; emitted after the registry's
/// families, each family's HELP and TYPE once, then its series.
final class HistogramSeries: Sendable {
    private struct Family {
        let family: MetricFamily
        var index: [[String]: LatencyHistogram] = [:]
        var ordered: [LatencyHistogram] = []
    }

    /// In the order of their first series.
    private let families = NIOLockedValueBox<[Family]>([])

    /// The series of `family` for `values`: made the first time, the same one after.
    func series(_ family: MetricFamily, _ values: [String]) -> LatencyHistogram {
        families.withLockedValue { families in
            let position = families.firstIndex { $0.family.name == family.name } ?? {
                families.append(Family(family: family))
                return families.count - 1
            }()
            if let known = families[position].index[values] { return known }
            let histogram = LatencyHistogram(labels: family.labels(values))
            families[position].index[values] = histogram
            families[position].ordered.append(histogram)
            return histogram
        }
    }

    func emit(into buffer: inout [UInt8]) {
        let snapshot = families.withLockedValue { $0.map { ($0.family, $0.ordered) } }
        for (family, series) in snapshot {
            buffer.append(contentsOf: "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) histogram\n".utf8)
            for histogram in series { histogram.emit(name: family.name, into: &buffer) }
        }
    }
}
