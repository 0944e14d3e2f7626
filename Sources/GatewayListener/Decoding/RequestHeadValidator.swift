package import GatewayCore
package import NIOHTTP1

/// Checks a decoded request head for what the HTTP parser lets through but a
/// proxy must refuse: ambiguous framing (request smuggling), transfer
/// codings it cannot pass on faithfully (501), and a `CONNECT` with a body.
package enum RequestHeadValidator {
    /// The framing of the request body, once validated.
    package enum BodyFraming: Equatable {
        case none
        case length(Int)
        case chunked
    }

    /// The fields the validator and the framer look for, found in one pass
    /// over the names (most are told apart by their length alone).
    package struct Names {
        package private(set) var hosts = 0
        package private(set) var contentLength = false
        package private(set) var transferEncoding = false
        package private(set) var upgrade = false

        package init(_ headers: RequestFields) {
            headers.forEachField { name, _, _ in
                let count = name.count
                switch count {
                case 4: if HTTP1HeadLines.equalsIgnoringCase(name, from: 0, to: count, "host") { hosts += 1 }
                case 7: if HTTP1HeadLines.equalsIgnoringCase(name, from: 0, to: count, "upgrade") { upgrade = true }
                case 14: if HTTP1HeadLines.equalsIgnoringCase(name, from: 0, to: count, "content-length") { contentLength = true }
                case 17: if HTTP1HeadLines.equalsIgnoringCase(name, from: 0, to: count, "transfer-encoding") { transferEncoding = true }
                default: break
                }
            }
        }
    }

    /// `names`: the head's ``Names`` when the caller has them already.
    package static func framing(of head: ClientRequestHead, names: Names? = nil) throws(GatewayError) -> BodyFraming {
        // By name, not by value: an empty `Transfer-Encoding:` or `Content-Length:`
        // has no canonical values, yet the field is there and a next hop may frame by it.
        let names = names ?? Names(head.headers)
        let hasLength = names.contentLength
        let hasEncoding = names.transferEncoding
        // Most requests have neither: no value is read.
        guard hasLength || hasEncoding else { return .none }
        let lengths = head.headers[canonicalForm: "content-length"]
        let encodings = head.headers[canonicalForm: "transfer-encoding"]
        if hasLength && hasEncoding {
            throw GatewayError(.requestSmuggling, "a request must not carry both Content-Length and Transfer-Encoding")
        }
        if hasEncoding {
            guard head.version.major == 1, head.version.minor >= 1 else {
                throw GatewayError(.requestSmuggling, "Transfer-Encoding is not allowed in an HTTP/1.0 request")
            }
            // NIO hands over each comma-separated coding of every field as one value.
            let codings = encodings.flatMap { $0.split(separator: ",") }.map { $0.trimmingASCIISpaces().lowercased() }
            guard codings.last == "chunked", codings.dropLast().allSatisfy({ $0 != "chunked" }) else {
                throw GatewayError(.requestSmuggling, "unsupported Transfer-Encoding: chunked must be the final coding, once")
            }
            guard codings.count == 1 else {
                throw GatewayError(.unsupportedTransferCoding, "Transfer-Encoding \(codings.joined(separator: ", ")) is not supported: only chunked")
            }
            if head.method == .CONNECT {
                throw GatewayError(.badRequest, "a CONNECT request has no body")
            }
            return .chunked
        }
        guard hasLength else { return .none }
        guard let first = lengths.first else { throw GatewayError(.badRequest, "invalid Content-Length") }
        guard lengths.allSatisfy({ $0 == first }) else {
            throw GatewayError(.requestSmuggling, "conflicting Content-Length values")
        }
        guard !first.isEmpty, first.count <= 18, first.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let value = Int(first) else {
            throw GatewayError(.badRequest, "invalid Content-Length")
        }
        if value > 0, head.method == .CONNECT {
            throw GatewayError(.badRequest, "a CONNECT request has no body")
        }
        return value == 0 ? .none : .length(value)
    }

    /// Header names must be tokens and values free of control characters (the
    /// parser checks most of this; a proxy checks again before forwarding), and
    /// `Host` appears once, and in every HTTP/1.1 request but a `CONNECT`
    /// (RFC 9112 §3.2: two Host lines are how requests get routed differently
    /// by two hops).
    package static func checkHeaders(of head: ClientRequestHead) throws(GatewayError) {
        var hosts = 0
        for (name, value) in head.headers {
            guard !name.isEmpty, name.utf8.allSatisfy(HTTPFieldBytes.isTokenByte) else {
                throw GatewayError(.badRequest, "invalid character in a header name")
            }
            guard value.utf8.allSatisfy(HTTPFieldBytes.isFieldValueByte) else {
                throw GatewayError(.badRequest, "invalid character in the value of header \(name)")
            }
            if name.utf8.count == 4, HopByHopHeaders.equalsIgnoringCase(name, "host") { hosts += 1 }
        }
        try checkHosts(hosts, of: head)
    }

    /// ``checkHeaders(of:)`` for a head ``HTTP1RequestHeadParser`` read: it
    /// refused every name that is no token and every value with a control
    /// byte as it read them, so only the `Host` rule is left (the fuzz
    /// invariants hold the framer's verdicts to ``checkHeaders(of:)``'s).
    package static func checkParsedHeaders(of head: ClientRequestHead, names: Names) throws(GatewayError) {
        try checkHosts(names.hosts, of: head)
    }

    private static func checkHosts(_ hosts: Int, of head: ClientRequestHead) throws(GatewayError) {
        if hosts > 1 {
            throw GatewayError(.badRequest, "more than one Host header")
        }
        if hosts == 0, head.version == .http1_1, head.method != .CONNECT {
            throw GatewayError(.badRequest, "an HTTP/1.1 request needs a Host header")
        }
    }
}
