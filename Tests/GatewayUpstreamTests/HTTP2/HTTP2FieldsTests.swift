import GatewayCore
import GatewayTesting
import NIOCore
import NIOHPACK
import NIOHTTP1
import Testing

@testable import GatewayUpstream

/// The translation between the gateway's requests and responses and HTTP/2
/// field sections: pseudo-header fields, hop-by-hop fields dropped, `te:
/// trailers` kept, `:authority`, lengths, trailers, and what a reset means.
@Suite("HTTP2Fields")
struct HTTP2FieldsTests {
    static func request(
        _ method: HTTPMethod = .GET,
        port: Int = 443,
        target: String = "/v1/items?x=1",
        headers: [(String, String)],
        body: ProxyBody = .empty
    ) -> ProxyRequest {
        ProxyRequest(
            method: method, scheme: .https, host: "api.example.com", port: port, target: target,
            headers: RequestFields(HTTPHeaders(headers)), body: body
        )
    }

    /// The names of the regular (non-pseudo) fields, in order.
    static func regularNames(_ fields: HPACKHeaders) -> [String] {
        fields.map { $0.name }.filter { !$0.hasPrefix(":") }
    }

    @Test func pseudoHeaderFieldsComeFirstAndHostBecomesAuthority() {
        let fields = HTTP2Fields.requestHeaders(Self.request(headers: [("Host", "api.example.com"), ("Accept", "*/*")]))
        #expect(Array(fields.map { $0.name }.prefix(4)) == [":method", ":scheme", ":authority", ":path"])
        #expect(fields.first(name: ":method") == "GET")
        #expect(fields.first(name: ":scheme") == "https")
        #expect(fields.first(name: ":authority") == "api.example.com")
        #expect(fields.first(name: ":path") == "/v1/items?x=1")
        #expect(Self.regularNames(fields) == ["accept", "te"])
    }

    @Test func authorityNamesANonDefaultPort() {
        let fields = HTTP2Fields.requestHeaders(Self.request(port: 8443, headers: [("Host", "api.example.com:8443")]))
        #expect(fields.first(name: ":authority") == "api.example.com:8443")
    }

    @Test func namesAreLowercasedInTheirOrder() {
        let fields = HTTP2Fields.requestHeaders(Self.request(headers: [("X-Trace-ID", "1"), ("Accept", "a"), ("x-other", "2"), ("X-Trace-ID", "3")]))
        #expect(Self.regularNames(fields) == ["x-trace-id", "accept", "x-other", "x-trace-id", "te"])
        #expect(fields[canonicalForm: "x-trace-id"] == ["1", "3"])
    }

    @Test func hopByHopFieldsAreNotSent() {
        let fields = HTTP2Fields.requestHeaders(Self.request(headers: [
            ("Connection", "close, X-Private"), ("Keep-Alive", "timeout=5"), ("Proxy-Connection", "keep-alive"),
            ("Proxy-Authorization", "Basic Zm9vOmJhcg=="), ("Transfer-Encoding", "chunked"), ("Upgrade", "websocket"),
            ("Trailer", "x-checksum"), ("X-Private", "hop"), ("X-Kept", "yes"),
        ]))
        #expect(Self.regularNames(fields) == ["x-kept", "te"])
    }

    /// The gateway takes trailers from an HTTP/2 upstream whatever the client
    /// said (gRPC servers refuse a request without `te: trailers`).
    @Test(arguments: ["trailers", "Trailers, deflate", "gzip", ""])
    func everyRequestSaysTETrailers(value: String) {
        let fields = HTTP2Fields.requestHeaders(Self.request(headers: [("TE", value)]))
        #expect(fields[canonicalForm: "te"] == ["trailers"])
        #expect(HTTP2Fields.requestHeaders(Self.request(headers: []))[canonicalForm: "te"] == ["trailers"])
    }

    @Test func contentLengthFollowsTheBody() {
        var body = ByteBuffer()
        body.writeString("hello")
        let buffered = HTTP2Fields.requestHeaders(Self.request(.POST, headers: [("Content-Length", "99")], body: .bytes(body)))
        #expect(buffered[canonicalForm: "content-length"] == ["5"], "the body's own length, the client's dropped")
        #expect(HTTP2Fields.requestHeaders(Self.request(headers: [])).first(name: "content-length") == nil)
        #expect(HTTP2Fields.requestHeaders(Self.request(.POST, headers: [])).first(name: "content-length") == "0")
        let streamed = Self.request(.PUT, headers: [], body: .stream(PatternBodySource(total: 10), declaredLength: nil))
        #expect(HTTP2Fields.requestHeaders(streamed).first(name: "content-length") == nil, "DATA frames end with END_STREAM")
        let declared = Self.request(.PUT, headers: [], body: .stream(PatternBodySource(total: 10), declaredLength: 10))
        #expect(HTTP2Fields.requestHeaders(declared).first(name: "content-length") == "10")
    }

    /// A GET whose client said `Content-Length: 0` says it upstream too; one that said nothing does not.
    @Test func anAnnouncedEmptyBodyKeepsItsLength() {
        #expect(HTTP2Fields.requestHeaders(Self.request(headers: [("CONTENT-LENGTH", "0")])).first(name: "content-length") == "0")
        #expect(HTTP2Fields.requestHeaders(Self.request(headers: [("Accept", "*/*")])).first(name: "content-length") == nil)
    }

    /// The client's bytes (an HTTP/1.1 client's fields, not strings): the same
    /// fields dropped, in any case, the rest lowercased in their order, and
    /// the `:authority` the connection gives.
    @Test func fieldLinesGoOnAsTheStringsDo() {
        var request = Self.request(headers: [])
        request.headers = .lines(
            "HOST: api.example.com\r\nUser-Agent: app/1.0\r\nConnection: X-Private\r\nx-private: hop\r\n"
                + "Keep-Alive: 5\r\nContent-Length: 0\r\nX-Kept: yes\r\n"
        )
        let fields = HTTP2Fields.requestHeaders(request, authority: "origin.test")
        #expect(fields.first(name: ":authority") == "origin.test")
        #expect(Self.regularNames(fields) == ["user-agent", "x-kept", "te", "content-length"])
        #expect(fields.first(name: "user-agent") == "app/1.0")
    }

    @Test func credentialsAndCookiesAreNeverIndexed() {
        let fields = HTTP2Fields.requestHeaders(Self.request(headers: [("Authorization", "Bearer t"), ("Cookie", "a=1; b=2"), ("Accept", "*/*")]))
        let indexing = Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.indexable) })
        #expect(indexing["authorization"] == .neverIndexed)
        #expect(indexing["cookie"] == .neverIndexed)
        #expect(indexing["accept"] == .indexable)
        #expect(fields.first(name: "cookie") == "a=1; b=2", "one field, as the client sent it")
    }

    @Test func aResponseSectionMakesTheHead() {
        let section = HPACKHeaders([
            (":status", "200"), ("content-type", "text/plain"), ("content-length", "5"), ("set-cookie", "a=1"), ("set-cookie", "b=2"),
        ])
        let read = HTTP2ResponseSection(section)
        #expect(read.status == 200 && read.invalidField == nil)
        let head = read.head(status: 200, hasBody: true)
        #expect(head.status == .ok)
        #expect(head.declaredLength == 5)
        #expect(head.headers.map(\.name) == ["content-type", "content-length", "set-cookie", "set-cookie"])
        #expect(head.headers["set-cookie"] == ["a=1", "b=2"])
    }

    @Test(arguments: ["20", "2000", "abc", "-20"])
    func aMalformedStatusIsNone(text: String) {
        #expect(HTTP2ResponseSection(HPACKHeaders([(":status", text)])).status == nil)
        #expect(HTTP2ResponseSection(HPACKHeaders([("x", "y")])).status == nil)
    }

    @Test func trailersKeepTheirRegularFields() {
        let trailers = HTTP2ResponseSection(HPACKHeaders([("grpc-status", "0"), ("grpc-message", ""), ("connection", "close")])).fields
        #expect(trailers.map(\.name) == ["grpc-status", "grpc-message"])
    }

    /// The section is the only check an upstream's fields get (NIOHTTP2's own is off upstream).
    @Test(arguments: [
        [("x-bad", "a\u{01}b")], [("x-bad", "a\rb")], [("x-bad", "a\nb")], [("x-bad", "a\u{0}b")], [("bad name", "v")], [("", "v")],
        [(":status", "200"), ("x-ok", "1"), ("x\u{7f}", "v")],
    ])
    func aFieldHTTP11CannotCarryMakesTheSectionMalformed(fields: [(String, String)]) {
        let read = HTTP2ResponseSection(HPACKHeaders(fields))
        #expect(read.invalidField != nil)
    }

    /// `content-length` is one decimal length: repeated, it goes on once;
    /// a sign, a letter or two that disagree make the section malformed.
    @Test func contentLengthIsOneDecimalLength() {
        let twice = HTTP2ResponseSection(HPACKHeaders([(":status", "200"), ("content-length", "5"), ("x", "1"), ("content-length", "5")]))
        #expect(!twice.invalidLength && twice.declaredLength == 5)
        #expect(twice.fields.map(\.name) == ["content-length", "x"], "one content-length field for an HTTP/1.1 client")
        for values in [["+5"], ["5a"], ["-1"], ["5", "6"], ["5, 6"]] {
            let read = HTTP2ResponseSection(HPACKHeaders([(":status", "200")] + values.map { ("content-length", $0) }))
            #expect(read.invalidLength, "\(values)")
        }
    }

    @Test func pseudoHeaderAndConnectionSpecificFieldsAreDropped() {
        let read = HTTP2ResponseSection(HPACKHeaders([
            (":status", "204"), (":path", "/x"), ("connection", "close"), ("keep-alive", "5"), ("transfer-encoding", "chunked"),
            ("upgrade", "h2c"), ("proxy-connection", "close"), ("x-kept", "1"),
        ]))
        #expect(read.status == 204)
        #expect(read.fields.map(\.name) == ["x-kept"])
        #expect(read.declaredLength == nil)
    }

    /// REFUSED_STREAM means the server did not process the request: safe to retry.
    /// A server's uppercase name (malformed) is lowercased before any check, so
    /// its length is held to; the head says its fields are ready for an HTTP/2 client.
    @Test func namesAreLowercasedBeforeTheyAreChecked() {
        let read = HTTP2ResponseSection(HPACKHeaders([
            (":status", "200"), ("Content-Length", "5"), ("X-Upper", "1"), ("HTTP2-Settings", "AAAA"), ("Connection", "close"),
        ]))
        #expect(read.declaredLength == 5)
        #expect(read.fields.map(\.name) == ["content-length", "x-upper"])
        let head = read.head(status: 200, hasBody: true)
        #expect(head.fields.isHTTP2Ready)
        var changed = head
        changed.headers.add(name: "X-Added", value: "1")
        #expect(!changed.fields.isHTTP2Ready, "a policy's change is checked again on the way out")
    }

    @Test func refusedStreamIsRetryableAndOtherResetsAreResets() {
        let refused = UpstreamHTTP2Stream.resetError(.refusedStream, beforeHead: true, upstream: "api.example.com:443")
        #expect(refused.code == .connectFailed)
        #expect(refused.isRetryable)
        #expect(refused.upstream == "api.example.com:443")
        #expect(UpstreamHTTP2Stream.resetError(.cancel, beforeHead: true, upstream: "h:443").code == .connectionReset)
        #expect(UpstreamHTTP2Stream.resetError(.refusedStream, beforeHead: false, upstream: "h:443").code == .connectionReset)
    }
}
