/// Phase timestamps of one upstream attempt, like URLSessionTaskMetrics.
///
/// A reused connection has no connect or TLS phase: those stay `nil` (not zero).
///
/// Plain data (no reference, no instant of the clock's, which is not
/// frozen: ``StoredInstant``): copied as the record, metrics and spans read
/// it, it is a copy of its bytes, with nothing to retain or release and no
/// runtime witness to call.
public struct AttemptTimings: Sendable, Equatable {
    /// The phase instants as kept: by value (``StoredInstant``). What is
    /// recorded on the hot path is written and tested here; the properties
    /// below read and write them as the clock's instants.
    public var instants: Instants

    /// ``AttemptTimings``' instants, by value.
    public struct Instants: Sendable, Equatable {
        public var started: StoredInstant
        public var connectStart: StoredInstant?
        public var connectEnd: StoredInstant?
        public var tlsStart: StoredInstant?
        public var tlsEnd: StoredInstant?
        public var requestSent: StoredInstant?
        public var responseHead: StoredInstant?
        public var end: StoredInstant?
    }

    public var started: ContinuousClock.Instant {
        get { instants.started.instant }
        set { instants.started = StoredInstant(newValue) }
    }
    public var connectStart: ContinuousClock.Instant? {
        get { instants.connectStart.instant }
        set { instants.connectStart.instant = newValue }
    }
    public var connectEnd: ContinuousClock.Instant? {
        get { instants.connectEnd.instant }
        set { instants.connectEnd.instant = newValue }
    }
    public var tlsStart: ContinuousClock.Instant? {
        get { instants.tlsStart.instant }
        set { instants.tlsStart.instant = newValue }
    }
    public var tlsEnd: ContinuousClock.Instant? {
        get { instants.tlsEnd.instant }
        set { instants.tlsEnd.instant = newValue }
    }
    public var requestSent: ContinuousClock.Instant? {
        get { instants.requestSent.instant }
        set { instants.requestSent.instant = newValue }
    }
    public var responseHead: ContinuousClock.Instant? {
        get { instants.responseHead.instant }
        set { instants.responseHead.instant = newValue }
    }
    public var end: ContinuousClock.Instant? {
        get { instants.end.instant }
        set { instants.end.instant = newValue }
    }
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
        self.instants = Instants(started: StoredInstant(started))
        self.reusedConnection = reusedConnection
    }

    /// Connect (including DNS) duration, nil on a reused connection.
    public var connect: Duration? { span(instants.connectStart, instants.connectEnd) }
    /// TLS handshake duration, nil on plain http or a reused connection.
    public var tls: Duration? { span(instants.tlsStart, instants.tlsEnd) }
    /// Time to first byte of the response, from the start of the attempt.
    public var timeToFirstByte: Duration? { span(instants.started, instants.responseHead) }
    /// Whole attempt, from its start to the end of the response body.
    public var total: Duration? { span(instants.started, instants.end) }

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
