import GatewayCore
package import NIOHPACK
package import NIOHTTP1

/// The translation between an HTTP/2 stream's fields and the gateway's
/// HTTP/1.1-shaped exchange (RFC 9113 §8.2-8.3), both ways:
///
/// - Request: `:method` and `:path` make the request line, `:authority`
///   becomes `Host` (the first field), `:scheme` is implied by the intercepted
///   origin (always https); cookie crumbs are joined with `; ` into one
///   `Cookie` (§8.2.3); `te: trailers` is kept (and read as "the client takes
///   trailers"); other fields as sent (lowercase, as HTTP/2 requires).
///   This pass is also the request's one validity check (RFC 9113 §8.2,
///   §8.3.1): the client connection's NIOHTTP2 handler runs without its own
///   header-block validation, which walked every section a second time (and
///   every response the gateway built, a third). Refused as malformed: a
///   field HTTP/1.1 cannot carry, an uppercase name, a connection-specific
///   field, a `te` other than `trailers`, an unknown, repeated or late
///   pseudo-field, a missing `:method`, `:scheme` or `:path`, and a
///   `content-length` that is not one decimal length (``ContentLengthField``).
///   The stream holds the DATA to that length (``ClientHTTP2Stream``):
///   NIOHTTP2's own content-length check (which read every section again,
///   both ways) is off too.
/// - Response: `:status` first, then the end-to-end fields with lowercase
///   names; connection-specific ones (`connection`, `keep-alive`,
///   `proxy-connection`, `transfer-encoding`, `upgrade`) never go out, nor does
///   a `te`. Trailers likewise, without pseudo-fields.
package enum HTTP2Translation {
    package struct RequestHead {
        package var head: ClientRequestHead
        /// The client sent `te: trailers`.
        package var acceptsTrailers: Bool
        /// The `content-length` it announced, if any.
        package var declaredLength: Int?
    }

    package enum Refusal: Error, Equatable {
        case missingPseudoField(String)
        /// A section RFC 9113 §8.2-8.3 calls malformed: what is wrong with it.
        case malformed(String)
        /// A field HTTP/1.1 cannot carry (a control byte in its value): its name, if printable.
        case invalidField(String)
        /// `CONNECT` (plain or extended) inside an intercepted connection.
        case connectNotSupported
    }

    package static func request(_ fields: HPACKHeaders) throws(Refusal) -> RequestHead {
        var method: String?
        var path: String?
        var authority: String?
        var headers: [(name: String, value: String)] = []
        var cookies: [String] = []
        var acceptsTrailers = false
        var declaredLength: Int?
        // `Host` first, as an HTTP/1.1 request line's next line would have it. The
        // pseudo-fields come before the others (NIOHTTP2 refuses them after), so
        // `:authority` is known at the first regular field.
        var hostFirst = false
        headers.reserveCapacity(fields.count + 2)
        var pseudo = PseudoFields()
        var sawRegular = false
        for (name, value, _) in fields {
            guard HTTPFieldBytes.canCarry(name: name, value: value) else {
                throw .invalidField(name.utf8.allSatisfy(HTTPFieldBytes.isFieldValueByte) ? name : "a field")
            }
            guard name.utf8.first != UInt8(ascii: ":") else {
                guard !sawRegular else { throw .malformed("\(name) after a regular field") }
                guard let field = PseudoFields.Field(name) else { throw .malformed("unknown pseudo-field \(name)") }
                guard pseudo.insert(field) else { throw .malformed("\(name) twice") }
                switch field {
                case .method: method = value
                case .path: path = value
                case .authority: authority = value
                case .scheme, .protocol: break  // the origin decides
                }
                continue
            }
            guard !HTTPFieldBytes.hasUppercase(name) else {
                throw .malformed("the field name \(name) is not lowercase")
            }
            sawRegular = true
            if headers.isEmpty, let authority {
                headers.append((name: "host", value: authority))
                hostFirst = true
            }
            // Told apart by length first: most names are none of these.
            switch name.utf8.count {
            case 6 where name == "cookie":
                cookies.append(value)
                continue
            case 2 where name == "te":
                guard value.lowercased() == "trailers" else { throw .malformed("te: \(value) (only trailers is allowed)") }
                acceptsTrailers = true
            case 14 where name == "content-length":
                let first = declaredLength == nil
                guard ContentLengthField.merge(value, into: &declaredLength) else {
                    throw .malformed("content-length that is not one decimal length")
                }
                if !first { continue }  // the same length again: one field goes on
            case 4 where name == "host":
                // `:authority` wins (§8.3.1); a second Host would be ambiguous upstream.
                if authority == nil { authority = value }
                continue
            default:
                // HTTP2-Settings (HTTP/1.1's upgrade to h2c) was never refused here.
                if isConnectionSpecific(name), name != "http2-settings" { throw .malformed("the connection-specific field \(name)") }
            }
            headers.append((name: name, value: value))
        }
        guard let method else { throw .missingPseudoField(":method") }
        let httpMethod = HTTPMethod(rawValue: method)
        guard httpMethod != .CONNECT else { throw .connectNotSupported }
        guard let path, !path.isEmpty else { throw .missingPseudoField(":path") }
        guard pseudo.contains(.scheme) else { throw .missingPseudoField(":scheme") }
        if !cookies.isEmpty { headers.append((name: "cookie", value: cookies.joined(separator: "; "))) }
        if let authority, !hostFirst {
            // No regular field, or a `host` field and no `:authority`: rare.
            headers.insert((name: "host", value: authority), at: 0)
        }
        let head = ClientRequestHead(version: HTTPVersion(major: 2, minor: 0), method: httpMethod, uri: path, headers: RequestFields(added: headers))
        return RequestHead(head: head, acceptsTrailers: acceptsTrailers, declaredLength: declaredLength)
    }

    /// A response head's fields: `:status`, then `fields` (names lowercased,
    /// connection-specific ones dropped; copied as they are when `checked`:
    /// an HTTP/2 upstream's section, which its stream read that way), then `via`.
    static func response(status: HTTPResponseStatus, fields: HTTPHeaders, checked: Bool = false, via: String?) -> HPACKHeaders {
        var out = HPACKHeaders()
        out.reserveCapacity(fields.count + 2)
        out.add(name: ":status", value: String(status.code))
        if checked {
            for (name, value) in fields { out.add(name: name, value: value) }
        } else {
            append(fields, to: &out)
        }
        if let via { out.add(name: "via", value: via) }
        return out
    }

    /// Trailer fields as an HTTP/2 trailing HEADERS frame carries them.
    static func trailers(_ fields: HTTPHeaders) -> HPACKHeaders {
        var out = HPACKHeaders()
        append(fields, to: &out)
        return out
    }

    private static func append(_ fields: HTTPHeaders, to out: inout HPACKHeaders) {
        for (name, value) in fields {
            let lower = HTTPFieldBytes.lowercasedName(name)
            guard !isConnectionSpecific(lower), lower.utf8.first != UInt8(ascii: ":") else { continue }
            out.add(name: lower, value: value)
        }
    }

    /// Fields HTTP/2 forbids (§8.2.2), and `te` (only `trailers` is allowed, in requests).
    /// Told apart by length first: most names are none of these lengths.
    static func isConnectionSpecific(_ lowercasedName: String) -> Bool {
        switch lowercasedName.utf8.count {
        case 2: lowercasedName == "te"
        case 7: lowercasedName == "upgrade"
        case 10: lowercasedName == "connection" || lowercasedName == "keep-alive"
        case 14: lowercasedName == "http2-settings"
        case 16: lowercasedName == "proxy-connection"
        case 17: lowercasedName == "transfer-encoding"
        default: false
        }
    }

    /// The request pseudo-fields seen so far (RFC 9113 §8.3.1), each allowed once.
    struct PseudoFields {
        enum Field: UInt8 {
            case method = 1, scheme = 2, authority = 4, path = 8, `protocol` = 16

            init?(_ name: String) {
                switch name {
                case ":method": self = .method
                case ":scheme": self = .scheme
                case ":authority": self = .authority
                case ":path": self = .path
                case ":protocol": self = .protocol
                default: return nil
                }
            }
        }

        private var seen: UInt8 = 0

        /// False when `field` was seen already.
        mutating func insert(_ field: Field) -> Bool {
            guard seen & field.rawValue == 0 else { return false }
            seen |= field.rawValue
            return true
        }

        func contains(_ field: Field) -> Bool { seen & field.rawValue != 0 }
    }
}
