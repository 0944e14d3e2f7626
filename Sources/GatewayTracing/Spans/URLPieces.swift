/// A URL as the pieces a request keeps (`scheme://host[:port]target`), for
/// `url.full`: the writer writes the pieces (``OTLPSpanWriter``), no string
/// is joined for it. The host is bracketed when it is an IPv6 address; the
/// port is left out when it is the scheme's default (as the request's
/// `authority` says it).
struct URLPieces: Sendable {
    var scheme: String
    var host: String
    /// Nil: the scheme's default port, not written.
    var port: Int?
    var target: String

    /// Whether the host goes in brackets (an IPv6 address).
    var bracketsHost: Bool { host.utf8.contains(UInt8(ascii: ":")) }

    /// The URL's length in bytes.
    var utf8Count: Int {
        scheme.utf8.count + 3 + host.utf8.count + (bracketsHost ? 2 : 0) + (port.map { 1 + Self.digits($0) } ?? 0) + target.utf8.count
    }

    /// The URL joined.
    var text: String {
        let host = bracketsHost ? "[\(host)]" : host
        return scheme + "://" + host + (port.map { ":\($0)" } ?? "") + target
    }

    /// Decimal digits of a port (0 to 65535; a negative one is never made).
    static func digits(_ value: Int) -> Int {
        var count = 1
        var rest = value / 10
        while rest > 0 {
            count += 1
            rest /= 10
        }
        return count
    }
}
