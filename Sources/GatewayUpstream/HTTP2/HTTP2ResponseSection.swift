import GatewayCore
import NIOHPACK
import NIOHTTP1

/// A response or trailer field section from an HTTP/2 upstream, read in one
/// pass (RFC 9113 §8.3.2): `:status` (three digits, else nil), the declared
/// `content-length`, and the regular fields passed on, with the pseudo-header
/// and connection-specific fields dropped (a server sends none).
///
/// This is the one check an upstream's fields get: the connection's NIOHTTP2
/// handler runs without its own header-block validation (which walked every
/// section again, name by name, and compared each against the forbidden
/// ones). Every name must be a token and every value HTTP/1.1 field-value
/// bytes (``HTTPFieldBytes/canCarry(name:value:)``, stricter than RFC 9113's
/// "no CR, LF or NUL"): otherwise `invalidField` names the first one that is
/// not, and the stream fails as a malformed response. An upstream's control
/// byte never reaches a client. A `content-length` that is not one decimal
/// length (``ContentLengthField``: several that disagree, a sign, a letter)
/// makes the section malformed too (`invalidLength`), and one repeated goes on
/// once; the stream's machine
/// holds the body to the length (NIOHTTP2's own content-length check is off).
/// Names are passed on lowercase, with no connection-specific field
/// (`http2-settings` included): the head's fields are
/// ``ResponseFields/isHTTP2Ready``, so an HTTP/2 client's HEADERS copy them.
struct HTTP2ResponseSection {
    var status: UInt?
    var declaredLength: Int?
    var fields = HTTPHeaders()
    /// The first field HTTP/1.1 cannot carry (its name, or "a field" when the
    /// name itself is not printable): the section is malformed.
    var invalidField: String?
    /// The `content-length` fields do not say one length.
    var invalidLength = false

    init(_ headers: HPACKHeaders) {
        // Gathered as pairs and made `HTTPHeaders` once: its `add` scans each name
        // for non-ASCII bytes and `Connection`, which the checks here have settled.
        var list: [(String, String)] = []
        list.reserveCapacity(headers.count)
        defer { fields = HTTPHeaders(list) }
        for field in headers {
            guard HTTPFieldBytes.canCarry(name: field.name, value: field.value) else {
                let name = field.name
                invalidField = name.utf8.allSatisfy(HTTPFieldBytes.isFieldValueByte) ? name : "a field"
                return
            }
            // RFC 9113 §8.2.1 wants lowercase names; a server that sends an uppercase
            // one (malformed, but harmless) has it lowercased before any check, so
            // its `Content-Length` is held to as any other and the section stays ready for HTTP/2.
            let name = HTTPFieldBytes.lowercasedName(field.name)
            if name.utf8.first == UInt8(ascii: ":") {
                if status == nil, name == ":status" { status = Self.status(field.value) }
                continue
            }
            if HopByHopHeaders.isAlwaysHopByHop(name) { continue }
            if name.utf8.count == 14 {
                if name == "http2-settings" { continue }
                if name == "content-length" {
                    let repeated = declaredLength != nil
                    if !ContentLengthField.merge(field.value, into: &declaredLength) { invalidLength = true }
                    // The same length again goes on as one field (some HTTP/1.1 parsers refuse two).
                    if repeated { continue }
                }
            }
            list.append((name, field.value))
        }
    }

    /// The response head a final HEADERS makes (`status` already checked by the stream's machine).
    func head(status: UInt, hasBody: Bool) -> UpstreamResponseHead {
        UpstreamResponseHead(
            status: HTTPResponseStatus(statusCode: Int(status)), fields: ResponseFields(http2Section: fields), declaredLength: declaredLength,
            hasBody: hasBody
        )
    }

    /// `:status`: three digits, else nil.
    private static func status(_ text: String) -> UInt? {
        guard text.utf8.count == 3, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return UInt(text)
    }
}
