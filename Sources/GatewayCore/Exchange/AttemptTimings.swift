/// Phase timestamps of one upstream attempt, like URLSessionTaskMetrics.
///
/// A reused connection has no connect or TLS phase: those stay `nil` (not zero).
///
/// Plain data (no reference, no instant of the clock's, which is not
/// frozen: ``StoredInstant``): copied as the record, metrics and spans read
/// it, it is a copy of its bytes, with nothing to retain or release and no
/// runtime witness to call.
public struct AttemptTimings: Sendable, Equatable {
    // Every instant is kept by value (``StoredInstant``, see there why) and
    // read and written as the clock's; `$name` is the kept value, which the
    // hot path writes and tests.
    public var started: ContinuousClock.Instant {
        get { storedStarted.instant }
        set { storedStarted = StoredInstant(newValue) }
    }
    @KeptInstant public var connectStart: ContinuousClock.Instant?
    @KeptInstant public var connectEnd: ContinuousClock.Instant?
    @KeptInstant public var tlsStart: ContinuousClock.Instant?
    @KeptInstant public var tlsEnd: ContinuousClock.Instant?
    @KeptInstant public var requestSent: ContinuousClock.Instant?
    @KeptInstant public var responseHead: ContinuousClock.Instant?
    @KeptInstant public var end: ContinuousClock.Instant?
    private var storedStarted: StoredInstant
    public var reusedConnection: Bool
    /// The status the upstream answered, or nil if the attempt failed before a response head.
    public var status: Int?
    /// The error code if the attempt failed.
    public var errorCode: GatewayError.Code?
    /// The protocol the attempt spoke upstream; nil when it failed before it
    /// had a connection.
    public var wireVersion: WireHTTPVersion?

    /// ``wireVersion``'s name: `HTTP/1.1` or `HTTP/2`, as traces, HAR and metrics name it.
    public var httpVersion: String? { wireVersion?.name }

    public init(started: ContinuousClock.Instant, reusedConnection: Bool = false) {
        self.storedStarted = StoredInstant(started)
        self.reusedConnection = reusedConnection
    }

    /// Connect (including DNS) duration, nil on a reused connection.
    public var connect: Duration? { span($connectStart, $connectEnd) }
    /// TLS handshake duration, nil on plain http or a reused connection.
    public var tls: Duration? { span($tlsStart, $tlsEnd) }
    /// Time to first byte of the response, from the start of the attempt.
    public var timeToFirstByte: Duration? { span(storedStarted, $responseHead) }
    /// Whole attempt, from its start to the end of the response body.
    public var total: Duration? { span(storedStarted, $end) }

    private func span(_ a: StoredInstant?, _ b: StoredInstant?) -> Duration? {
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
