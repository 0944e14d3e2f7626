import GatewayCore

/// A CLIENT span's `url.full`, `scheme://host[:port]/target` (an IPv6 host in
/// brackets, the port only when it is not the scheme's), kept as its parts:
/// the writer copies them into the attribute (``OTLPSpanWriter``), no URL
/// string is made. The same text as ``ProxyRequest/url`` with the target
/// redacted.
struct UpstreamURL: Sendable {
    let scheme: UpstreamScheme
    let host: String
    /// The port as written after the host; nil when it is the scheme's own.
    let port: String?
    /// The request's target, redacted.
    let target: String
    /// An IPv6 address: the host goes in brackets.
    let bracketsHost: Bool

    init(scheme: UpstreamScheme, host: String, port: Int, target: String) {
        self.scheme = scheme
        self.host = host
        // A port's digits are a small string: no allocation.
        self.port = port == scheme.defaultPort ? nil : String(port)
        self.target = target
        self.bracketsHost = host.utf8.contains(UInt8(ascii: ":"))
    }

    /// The URL's UTF-8 bytes.
    var utf8Count: Int {
        scheme.rawValue.utf8.count + 3 + (bracketsHost ? 2 : 0) + host.utf8.count + (port.map { 1 + $0.utf8.count } ?? 0)
            + target.utf8.count
    }

    /// The URL's parts in order, each passed to `body`.
    func forEachPart(_ body: (Substring) -> Void) {
        body(scheme.rawValue[...])
        body("://")
        if bracketsHost { body("[") }
        body(host[...])
        if bracketsHost { body("]") }
        if let port {
            body(":")
            body(port[...])
        }
        body(target[...])
    }

    /// The URL, made (the tests' sink, and a reader's).
    var string: String {
        var url = ""
        url.reserveCapacity(utf8Count)
        forEachPart { url += $0 }
        return url
    }
}
