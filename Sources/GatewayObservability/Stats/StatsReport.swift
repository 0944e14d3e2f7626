public import Foundation

/// The `/stats` document: per endpoint over the sliding window, exact
/// percentiles (HdrHistogram, within 1 %). Read by `gateway stats` and the
/// admin page. JSON keys are snake_case; times in milliseconds.
public struct StatsReport: Codable, Sendable, Equatable {
    /// The window the figures cover at most, in seconds.
    public var windowSeconds: Double
    /// The length of one slice of the window (the latency chart's resolution).
    public var sliceSeconds: Double
    public var uptimeSeconds: Double
    public var endpoints: [EndpointStats]

    public init(windowSeconds: Double, sliceSeconds: Double, uptimeSeconds: Double, endpoints: [EndpointStats]) {
        self.windowSeconds = windowSeconds
        self.sliceSeconds = sliceSeconds
        self.uptimeSeconds = uptimeSeconds
        self.endpoints = endpoints
    }

    public struct EndpointStats: Codable, Sendable, Equatable {
        public var upstream: String
        public var method: String
        public var endpoint: String
        public var count: Int
        public var rps: Double
        /// Share of requests answered 5xx or with a gateway error, in percent.
        public var errorPct: Double
        public var p50Ms: Double
        public var p95Ms: Double
        public var p99Ms: Double
        public var maxMs: Double
        /// Extra upstream attempts (a request tried three times counts two).
        public var retries: Int
        /// One entry per slice with traffic, oldest first, for a chart.
        public var slices: [Slice]

        public struct Slice: Codable, Sendable, Equatable {
            /// Seconds before now at which the slice began (0 = the current slice).
            public var ageSeconds: Double
            public var count: Int
            public var p50Ms: Double
            public var p95Ms: Double
        }
    }

    /// How `/stats` is encoded (and decoded by the CLI).
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }

    public func json() -> [UInt8] {
        (try? Array(Self.encoder().encode(self))) ?? Array("{}".utf8)
    }

    public static func decode(_ bytes: [UInt8]) throws -> StatsReport {
        try decoder().decode(StatsReport.self, from: Data(bytes))
    }
}

extension StatsReport.EndpointStats {
    init(key: EndpointKey, snapshot: WindowSnapshot, sliceSeconds: Double) {
        let ms = { (micros: UInt64) in Double(micros) / 1000 }
        let covered = max(snapshot.covered.seconds, 1)
        self.init(
            upstream: key.upstream,
            method: key.method,
            endpoint: key.endpoint,
            count: snapshot.count,
            rps: (Double(snapshot.count) / covered * 1000).rounded() / 1000,
            errorPct: snapshot.count == 0 ? 0 : (Double(snapshot.failures) * 100 / Double(snapshot.count) * 100).rounded() / 100,
            p50Ms: ms(snapshot.p50Micros),
            p95Ms: ms(snapshot.p95Micros),
            p99Ms: ms(snapshot.p99Micros),
            maxMs: ms(snapshot.maxMicros),
            retries: snapshot.retries,
            slices: snapshot.slices.map { slice in
                Slice(ageSeconds: Double(slice.age) * sliceSeconds, count: slice.count, p50Ms: ms(slice.p50Micros), p95Ms: ms(slice.p95Micros))
            }
        )
    }
}
