/// A response or a delay the gateway made on purpose (issue 55): a fault, a
/// mock or an entry replayed from a HAR. Marked in the trace record, the HAR
/// entry (`_injected`) and the log line; counted in
/// `gateway_faults_injected_total` or `gateway_mocked_responses_total`, never
/// as the upstream's own outcome.
public struct Injection: Sendable, Equatable, CustomStringConvertible {
    public enum Source: String, Sendable {
        case fault, mock, replay
    }

    public var source: Source
    /// For a fault: `error`, `latency` or `reset`; for a mock or replay: `response`.
    public var kind: String
    /// For a fault: `app` or `policies`.
    public var toward: String?

    public init(source: Source, kind: String, toward: String? = nil) {
        self.source = source
        self.kind = kind
        self.toward = toward
    }

    public static let mock = Injection(source: .mock, kind: "response")
    public static let replay = Injection(source: .replay, kind: "response")

    /// `fault:error`, `fault:latency`, `mock`, `replay`.
    public var description: String {
        source == .fault ? "fault:\(kind)" : source.rawValue
    }
}
