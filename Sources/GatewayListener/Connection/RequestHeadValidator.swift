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

    package static func framing(of head: HTTPRequestHead) throws(GatewayError) -> BodyFraming {
        let lengths = head.headers[canonicalForm: "content-length"]
        let encodings = head.headers[canonicalForm: "transfer-encoding"]
        // By name, not by value: an empty `Transfer-Encoding:` or `Content-Length:`
        // has no canonical values, yet the field is there and a next hop may frame by it.
        let hasLength = head.headers.contains(name: "content-length")
        let hasEncoding = head.headers.contains(name: "transfer-encoding")
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
    package static func checkHeaders(of head: HTTPRequestHead) throws(GatewayError) {
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
        if hosts > 1 {
            throw GatewayError(.badRequest, "more than one Host header")
        }
        if hosts == 0, head.version == .http1_1, head.method != .CONNECT {
            throw GatewayError(.badRequest, "an HTTP/1.1 request needs a Host header")
        }
    }
}
