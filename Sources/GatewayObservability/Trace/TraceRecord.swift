import Foundation

/// One exchange in the trace file (one JSON object per line). Secrets are
/// already redacted when a record is built.
public struct TraceRecord: Sendable, Codable, Equatable {
    public struct Attempt: Sendable, Codable, Equatable {
        public var status: Int?
        public var error: String?
        public var reusedConnection: Bool
        /// Phase durations in seconds (nil when the phase did not happen).
        public var connect: Double?
        public var tls: Double?
        public var ttfb: Double?
        public var total: Double?
        /// When the attempt started, in seconds after the exchange started
        /// (nil in records written before it was recorded).
        public var start: Double?
        /// When connecting began, in seconds after the attempt started (nil on a reused connection).
        public var connectStart: Double?
        /// When the request was fully written upstream, in seconds after the attempt started.
        public var sent: Double?
        /// `HTTP/2` when the attempt spoke HTTP/2 upstream (nil: HTTP/1.1).
        public var httpVersion: String?

        public init(
            status: Int?, error: String?, reusedConnection: Bool, connect: Double?, tls: Double?, ttfb: Double?, total: Double?,
            start: Double? = nil, connectStart: Double? = nil, sent: Double? = nil, httpVersion: String? = nil
        ) {
            self.status = status
            self.error = error
            self.reusedConnection = reusedConnection
            self.connect = connect
            self.tls = tls
            self.ttfb = ttfb
            self.total = total
            self.start = start
            self.connectStart = connectStart
            self.sent = sent
            self.httpVersion = httpVersion
        }
    }

    /// A header as the trace shows it (redacted: secrets as `${NAME}` placeholders).
    public struct Header: Sendable, Codable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public var id: String
    /// ISO 8601 with milliseconds, UTC.
    public var time: String
    public var client: String
    public var upstream: String?
    public var method: String
    /// `host[:port]` + path without query, as the client asked for it (not an
    /// upstream's `origin`), e.g. `api.github.com/user`.
    public var endpoint: String
    public var attempts: [Attempt]
    /// Status sent to the client; nil when the exchange failed before one.
    public var status: Int?
    public var error: String?
    public var requestBytes: Int?
    public var responseBytes: Int
    public var duration: Double
    /// The response head the client got, redacted; nil when it got none (or in
    /// records written before response heads were recorded).
    public var responseHeaders: [Header]?
    /// Replays through the gateway (`curl -x ...`): the client's request.
    public var curl: String
    /// The request as sent upstream, credentials as shell variables.
    public var curlDirect: String
    /// The exchange's distributed trace (32 hex digits) while tracing was on:
    /// the trace in Jaeger or Tempo that holds the exchange's spans.
    public var traceId: String?
    /// `HTTP/2` when the client spoke HTTP/2 (a stream of an intercepted connection); nil: HTTP/1.1.
    public var httpVersion: String?
    /// The response was made by the gateway in the upstream's place (`mock`,
    /// `replay`, `fault:error`) or shaped by it (`fault:latency`); nil otherwise.
    public var injected: String?

    public init(
        id: String, time: String, client: String, upstream: String?, method: String, endpoint: String,
        attempts: [Attempt], status: Int?, error: String?, requestBytes: Int?, responseBytes: Int,
        duration: Double, curl: String, curlDirect: String, responseHeaders: [Header]? = nil, traceId: String? = nil, httpVersion: String? = nil
    ) {
        self.id = id
        self.time = time
        self.client = client
        self.upstream = upstream
        self.method = method
        self.endpoint = endpoint
        self.attempts = attempts
        self.status = status
        self.error = error
        self.requestBytes = requestBytes
        self.responseBytes = responseBytes
        self.duration = duration
        self.curl = curl
        self.curlDirect = curlDirect
        self.responseHeaders = responseHeaders
        self.traceId = traceId
        self.httpVersion = httpVersion
    }

    public static func decode(line: some StringProtocol) throws -> TraceRecord {
        try JSONDecoder().decode(TraceRecord.self, from: Data(line.utf8))
    }

    /// `2026-11-21T23:59:35.123Z`: ISO 8601, UTC, milliseconds. Formatted by hand:
    /// a Foundation date formatter per record cost a fifth of a traced request's CPU (ICU).
    static func timestamp(_ date: Date) -> String {
        // Whole microseconds first, so 35.123 (stored as 35.12299...) stays .123.
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let totalMillis = micros >= 0 ? micros / 1000 : (micros - 999) / 1000
        var seconds = time_t(totalMillis >= 0 ? totalMillis / 1000 : (totalMillis - 999) / 1000)
        let millis = Int(totalMillis - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        // Digits written into one 24-byte string: no string per field.
        return String(unsafeUninitializedCapacity: 24) { out in
            var at = 0
            func put(_ value: Int, _ width: Int) {
                var value = max(0, value)
                for index in stride(from: at + width - 1, through: at, by: -1) {
                    out[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                at += width
            }
            func put(_ byte: Unicode.Scalar) {
                out[at] = UInt8(ascii: byte)
                at += 1
            }
            put(Int(parts.tm_year) + 1900, 4)
            put("-")
            put(Int(parts.tm_mon) + 1, 2)
            put("-")
            put(Int(parts.tm_mday), 2)
            put("T")
            put(Int(parts.tm_hour), 2)
            put(":")
            put(Int(parts.tm_min), 2)
            put(":")
            put(Int(parts.tm_sec), 2)
            put(".")
            put(millis, 3)
            put("Z")
            return at
        }
    }
}
