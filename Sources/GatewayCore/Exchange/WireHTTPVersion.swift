/// The HTTP version an upstream attempt spoke (``AttemptTimings/wireVersion``).
public enum WireHTTPVersion: Sendable, Hashable {
    case http1
    case http2

    /// ``UpstreamHTTPVersion/http1Name`` or ``UpstreamHTTPVersion/http2Name``.
    public var name: String {
        switch self {
        case .http1: UpstreamHTTPVersion.http1Name
        case .http2: UpstreamHTTPVersion.http2Name
        }
    }
}
