import GatewayCore

/// The collector's URL: made from `OTEL_EXPORTER_OTLP_ENDPOINT` as a URL, and
/// shown (in `check-config`, the start-up line, errors) without its query's values.
extension TracingConfig {
    /// The path `OTEL_EXPORTER_OTLP_ENDPOINT`'s URL gets for traces.
    public static let tracesSignalPath = "v1/traces"

    /// `base` (`OTEL_EXPORTER_OTLP_ENDPOINT`, the URL of every signal) with
    /// `signal` appended to its path, as the OpenTelemetry specification says:
    /// `http://c:4318` → `http://c:4318/v1/traces`, `http://c:4318/otlp/` →
    /// `http://c:4318/otlp/v1/traces`, and a query (or fragment) stays after
    /// the path: `http://c/otlp?tenant=a` → `http://c/otlp/v1/traces?tenant=a`.
    /// Split as RFC 3986 splits a URL (the authority ends at the first `/`,
    /// `?` or `#` after `://`; the path at the first `?` or `#`); text that is
    /// no such URL gets the path added at its end (validation names what is
    /// wrong with it).
    public static func signalEndpoint(base: String, signal: String = tracesSignalPath) -> String {
        let bytes = base.utf8
        var pathStart = bytes.startIndex
        if let scheme = base.range(of: "://") {
            let authority = bytes[scheme.upperBound...]
            pathStart = authority.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        }
        let pathEnd = bytes[pathStart...].firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        let path = base[pathStart..<pathEnd]
        return String(base[..<pathEnd]) + (path.hasSuffix("/") ? "" : "/") + signal + String(base[pathEnd...])
    }

    /// ``endpoint`` as it may be shown: ``shownEndpoint(_:)``.
    public var shownEndpoint: String { Self.shownEndpoint(endpoint) }

    /// `endpoint` as `check-config`, the start-up line and errors show it:
    /// its query's values dropped, the names kept (`?api_key=` for
    /// `?api_key=abc`: a collector's key in its URL is a secret), and any
    /// userinfo dropped; as the exchange's log line shows a URL
    /// (``LoggedText/withoutQueryValues(_:)``, the same function).
    public static func shownEndpoint(_ endpoint: String) -> String {
        LoggedText.withoutQueryValues(endpoint)
    }
}
