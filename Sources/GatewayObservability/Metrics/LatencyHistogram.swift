import NIOConcurrencyHelpers

/// One Prometheus histogram series in seconds over ``LatencyBuckets/bounds``,
/// written by the gateway itself rather than swift-prometheus' `Histogram`:
/// that one adds one to every cumulative bucket at or above the value, a
/// linear walk over all of them per observation, which with the ~60 buckets
/// p95 precision needs would cost each request ~60 comparisons and stores.
/// Here an observation is a binary search (6 comparisons) and one count under
/// the series' lock; the cumulative counts are summed only when scraped.
final class LatencyHistogram: Sendable {
    private struct State {
        /// Per bucket, not cumulative: `counts[i]` holds values in (bounds[i-1], bounds[i]];
        /// the last slot holds those above the largest bound (`+Inf`).
        var counts: [Int]
        var sum: Double = 0
    }

    /// `upstream="api",endpoint="/users/{id}",method="GET"`, escaped once when made.
    let renderedLabels: [UInt8]
    private let state: NIOLockedValueBox<State>

    init(labels: [(String, String)]) {
        var rendered: [UInt8] = []
        for (index, (name, value)) in labels.enumerated() {
            if index > 0 { rendered.append(UInt8(ascii: ",")) }
            rendered.append(contentsOf: name.utf8)
            rendered.append(contentsOf: "=\"".utf8)
            rendered.appendEscapedLabelValue(value)
            rendered.append(UInt8(ascii: "\""))
        }
        self.renderedLabels = rendered
        self.state = NIOLockedValueBox(State(counts: Array(repeating: 0, count: LatencyBuckets.bounds.count + 1)))
    }

    /// Counts `seconds` in its bucket (Prometheus `le` is inclusive).
    func record(_ seconds: Double) {
        let index = LatencyBuckets.index(of: seconds)
        state.withLockedValue { s in
            s.counts[index] += 1
            s.sum += seconds
        }
    }

    /// The series' lines: `_bucket` per bound (cumulative) and `+Inf`, `_sum`, `_count`.
    func emit(name: String, into buffer: inout [UInt8]) {
        // The copy shares the array's storage until the next record.
        let snapshot = state.withLockedValue { $0 }
        var cumulative = 0
        for (index, count) in snapshot.counts.enumerated() {
            cumulative += count
            buffer.append(contentsOf: name.utf8)
            buffer.append(contentsOf: "_bucket{".utf8)
            buffer.append(contentsOf: renderedLabels)
            if !renderedLabels.isEmpty { buffer.append(UInt8(ascii: ",")) }
            buffer.append(contentsOf: "le=\"".utf8)
            buffer.append(contentsOf: LatencyBuckets.labels[index])
            buffer.append(contentsOf: "\"} ".utf8)
            buffer.append(contentsOf: String(cumulative).utf8)
            buffer.append(UInt8(ascii: "\n"))
        }
        for (suffix, value) in [("_sum", snapshot.sum.description), ("_count", String(cumulative))] {
            buffer.append(contentsOf: name.utf8)
            buffer.append(contentsOf: suffix.utf8)
            if !renderedLabels.isEmpty {
                buffer.append(UInt8(ascii: "{"))
                buffer.append(contentsOf: renderedLabels)
                buffer.append(UInt8(ascii: "}"))
            }
            buffer.append(UInt8(ascii: " "))
            buffer.append(contentsOf: value.utf8)
            buffer.append(UInt8(ascii: "\n"))
        }
    }
}

extension [UInt8] {
    /// A label value as the text exposition format wants it: `\`, `"` and line feed escaped.
    mutating func appendEscapedLabelValue(_ value: String) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\""): append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\n"): append(contentsOf: #"\n"#.utf8)
            default: append(byte)
            }
        }
    }
}
