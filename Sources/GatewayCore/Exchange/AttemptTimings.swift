/// Phase timestamps of one upstream attempt, like URLSessionTaskMetrics.
///
/// A reused connection has no connect or TLS phase: those stay `nil` (not zero).
public struct AttemptTimings: Sendable, Equatable {
    public var started: ContinuousClock.Instant
    public var connectStart: ContinuousClock.Instant?
    public var connectEnd: ContinuousClock.Instant?
    public var tlsStart: ContinuousClock.Instant?
    public var tlsEnd: ContinuousClock.Instant?
    public var requestSent: ContinuousClock.Instant?
    public var responseHead: ContinuousClock.Instant?
    public var end: ContinuousClock.Instant?
    public var reusedConnection: Bool
    /// The status the upstream answered, or nil if the attempt failed before a response head.
    public var status: Int?
    /// The error code if the attempt failed.
    public var errorCode: GatewayError.Code?
    /// The protocol the attempt spoke upstream: ``UpstreamHTTPVersion/http1Name``
    /// (`HTTP/1.1`) or ``UpstreamHTTPVersion/http2Name`` (`HTTP/2`); nil when
    /// it failed before it had a connection.
    public var httpVersion: String?

    public init(started: ContinuousClock.Instant, reusedConnection: Bool = false) {
        self.started = started
        self.reusedConnection = reusedConnection
    }

    /// Connect (including DNS) duration, nil on a reused connection.
    public var connect: Duration? { span(connectStart, connectEnd) }
    /// TLS handshake duration, nil on plain http or a reused connection.
    public var tls: Duration? { span(tlsStart, tlsEnd) }
    /// Time to first byte of the response, from the start of the attempt.
    public var timeToFirstByte: Duration? { span(started, responseHead) }
    /// Whole attempt, from its start to the end of the response body.
    public var total: Duration? { span(started, end) }

    private func span(_ a: ContinuousClock.Instant?, _ b: ContinuousClock.Instant?) -> Duration? {
        guard let a, let b else { return nil }
        return b - a
    }
}

extension Duration {
    /// The duration in seconds as a Double, for metrics and logs.
    public var seconds: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) / 1e18
    }
}
