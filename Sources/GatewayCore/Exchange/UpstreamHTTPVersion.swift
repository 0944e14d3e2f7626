/// Which HTTP version the gateway speaks to an upstream: an upstream's
/// `http_version`. Part of the upstream pool key, so connections opened under
/// different choices are never shared.
public enum UpstreamHTTPVersion: String, Sendable, Hashable, CaseIterable {
    /// Over https, ALPN offers `h2` then `http/1.1` and the server chooses (a
    /// server that selects nothing speaks HTTP/1.1); over plain http, HTTP/1.1.
    case auto
    /// HTTP/1.1 only: ALPN offers `http/1.1` alone.
    case http1
    /// HTTP/2 only: ALPN offers `h2` alone over https; over plain http,
    /// prior-knowledge h2c (RFC 9113 §3.3).
    case http2

    /// `HTTP/1.1` or `HTTP/2`: the protocol an attempt used, as traces, HAR
    /// and metrics name it (``AttemptTimings/httpVersion``).
    public static let http1Name = "HTTP/1.1"
    public static let http2Name = "HTTP/2"
}
