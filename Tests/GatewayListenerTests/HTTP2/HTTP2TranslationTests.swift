@testable import GatewayListener
import NIOHPACK
import NIOHTTP1
import Testing

/// The written-down translation between HTTP/2 fields and the gateway's
/// HTTP/1.1-shaped exchange (RFC 9113 §8.2-8.3).
struct HTTP2TranslationTests {
    @Test func pseudoFieldsMakeTheRequestLineAndHostComesFirst() throws {
        let fields: HPACKHeaders = [
            ":method": "POST", ":scheme": "https", ":authority": "api.example.com:8443", ":path": "/v1/items?q=1",
            "content-type": "application/json", "content-length": "12", "accept": "*/*",
        ]
        let request = try HTTP2Translation.request(fields)
        #expect(request.head.method == .POST)
        #expect(request.head.uri == "/v1/items?q=1")
        #expect(request.head.version == HTTPVersion(major: 2, minor: 0))
        #expect(request.head.headers.map(\.name) == ["host", "content-type", "content-length", "accept"])
        #expect(request.head.headers["host"] == ["api.example.com:8443"])
        #expect(request.declaredLength == 12)
        #expect(!request.acceptsTrailers)
    }

    @Test func cookieCrumbsAreJoinedAndTETrailersIsRead() throws {
        let fields: HPACKHeaders = [
            ":method": "GET", ":scheme": "https", ":authority": "a.test", ":path": "/",
            "cookie": "a=1", "te": "trailers", "cookie": "b=2", "cookie": "c=3",
        ]
        let request = try HTTP2Translation.request(fields)
        #expect(request.head.headers["cookie"] == ["a=1; b=2; c=3"])
        #expect(request.acceptsTrailers)
        #expect(request.head.headers["te"] == ["trailers"])
    }

    @Test func authorityWinsOverAHostField() throws {
        let fields: HPACKHeaders = [":method": "GET", ":scheme": "https", ":path": "/", ":authority": "a.test", "host": "b.test"]
        #expect(try HTTP2Translation.request(fields).head.headers["host"] == ["a.test"])
        let hostOnly: HPACKHeaders = [":method": "GET", ":scheme": "https", ":path": "/", "host": "b.test"]
        #expect(try HTTP2Translation.request(hostOnly).head.headers["host"] == ["b.test"])
    }

    /// `Host` comes first whichever field carried the authority, and once.
    @Test func hostIsTheFirstFieldWhereverTheAuthorityCameFrom() throws {
        let late: HPACKHeaders = [":method": "GET", ":scheme": "https", ":path": "/", "accept": "*/*", "cookie": "a=1", "host": "b.test", "x-a": "1"]
        #expect(try HTTP2Translation.request(late).head.headers.map(\.name) == ["host", "accept", "x-a", "cookie"])
        let cookieFirst: HPACKHeaders = [":method": "GET", ":scheme": "https", ":path": "/", ":authority": "a.test", "cookie": "a=1", "accept": "*/*"]
        #expect(try HTTP2Translation.request(cookieFirst).head.headers.map(\.name) == ["host", "accept", "cookie"])
        let pseudoOnly: HPACKHeaders = [":method": "GET", ":scheme": "https", ":path": "/", ":authority": "a.test"]
        #expect(try HTTP2Translation.request(pseudoOnly).head.headers.map(\.name) == ["host"])
        let none: HPACKHeaders = [":method": "GET", ":scheme": "https", ":path": "/", "accept": "*/*"]
        #expect(try HTTP2Translation.request(none).head.headers.map(\.name) == ["accept"])
    }

    /// The translation is the request's one validity check (NIOHTTP2's is off):
    /// what RFC 9113 §8.2-8.3 calls malformed is refused.
    @Test(arguments: [
        [(":method", "GET"), (":scheme", "https"), (":path", "/"), ("Accept", "*/*")],
        [(":method", "GET"), (":scheme", "https"), (":path", "/"), ("connection", "close")],
        [(":method", "GET"), (":scheme", "https"), (":path", "/"), ("transfer-encoding", "chunked")],
        [(":method", "GET"), (":scheme", "https"), (":path", "/"), ("keep-alive", "5")],
        [(":method", "GET"), (":scheme", "https"), (":path", "/"), ("proxy-connection", "close")],
        [(":method", "GET"), (":scheme", "https"), (":path", "/"), ("upgrade", "websocket")],
        [(":method", "GET"), (":scheme", "https"), (":path", "/"), ("te", "gzip")],
        [(":method", "GET"), (":scheme", "https"), (":path", "/"), (":path", "/again")],
        [(":method", "GET"), (":scheme", "https"), (":path", "/"), (":status", "200")],
        [(":method", "GET"), (":scheme", "https"), ("accept", "*/*"), (":path", "/")],
        [(":method", "GET"), (":scheme", "https"), ("host", "a.test"), (":path", "/")],
        [(":method", "GET"), (":scheme", "https"), ("cookie", "a=1"), (":path", "/")],
    ])
    func malformedSectionsAreRefused(fields: [(String, String)]) {
        #expect(throws: HTTP2Translation.Refusal.self) { try HTTP2Translation.request(HPACKHeaders(fields)) }
    }

    /// `content-length` is one decimal length (NIOHTTP2 no longer reads it):
    /// the same length twice goes on as one field; a sign, a letter, an empty
    /// value or two lengths that disagree make the request malformed.
    @Test func contentLengthIsOneDecimalLength() throws {
        let head: HPACKHeaders = [":method": "POST", ":scheme": "https", ":authority": "a.test", ":path": "/"]
        var twice = head
        twice.add(name: "content-length", value: "7")
        twice.add(name: "content-length", value: " 7 ")
        let request = try HTTP2Translation.request(twice)
        #expect(request.declaredLength == 7)
        #expect(request.head.headers["content-length"] == ["7"])
        for values in [["+7"], ["-1"], ["7a"], [""], ["7", "8"], ["7, 8"], ["0x10"]] {
            var fields = head
            for value in values { fields.add(name: "content-length", value: value) }
            #expect(throws: HTTP2Translation.Refusal.malformed("content-length that is not one decimal length"), "\(values)") {
                try HTTP2Translation.request(fields)
            }
        }
    }

    @Test func aRequestWithoutSchemeIsRefused() {
        #expect(throws: HTTP2Translation.Refusal.missingPseudoField(":scheme")) {
            try HTTP2Translation.request([":method": "GET", ":path": "/", ":authority": "a.test"])
        }
    }

    @Test func teTrailersInAnyCaseIsAccepted() throws {
        let request = try HTTP2Translation.request([":method": "POST", ":scheme": "https", ":path": "/", "te": "Trailers"])
        #expect(request.acceptsTrailers)
    }

    @Test func connectAndMissingFieldsAreRefused() {
        #expect(throws: HTTP2Translation.Refusal.connectNotSupported) {
            try HTTP2Translation.request([":method": "CONNECT", ":authority": "a.test:443"])
        }
        #expect(throws: HTTP2Translation.Refusal.missingPseudoField(":path")) {
            try HTTP2Translation.request([":method": "GET", ":scheme": "https", ":authority": "a.test"])
        }
        #expect(throws: HTTP2Translation.Refusal.missingPseudoField(":method")) {
            try HTTP2Translation.request([":path": "/", ":scheme": "https"])
        }
    }

    @Test func responseFieldsAreLowercasedWithoutConnectionSpecificOnes() {
        let fields = HTTPHeaders([
            ("Content-Type", "text/plain"), ("Connection", "close"), ("Keep-Alive", "timeout=5"),
            ("Transfer-Encoding", "chunked"), ("Upgrade", "h2c"), ("TE", "trailers"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"),
        ])
        let out = HTTP2Translation.response(status: .created, fields: fields, via: "1.1 gateway")
        #expect(out.map(\.name) == [":status", "content-type", "set-cookie", "set-cookie", "via"])
        #expect(out.first(name: ":status") == "201")
        #expect(out[canonicalForm: "set-cookie"] == ["a=1", "b=2"])
    }

    /// An HTTP/2 upstream's checked section is copied as it is, `:status` first and `via` last.
    @Test func checkedFieldsAreCopiedAsTheyAre() {
        let fields = HTTPHeaders([("content-type", "text/plain"), ("set-cookie", "a=1"), ("etag", "\"x\"")])
        let out = HTTP2Translation.response(status: .ok, fields: fields, checked: true, via: "2.0 gateway")
        #expect(out.map(\.name) == [":status", "content-type", "set-cookie", "etag", "via"])
        #expect(out.map(\.value) == ["200", "text/plain", "a=1", "\"x\"", "2.0 gateway"])
    }

    @Test func trailersKeepTheirFieldsWithoutPseudoOnes() {
        let trailers = HTTPHeaders([("grpc-status", "0"), ("Grpc-Message", "ok"), (":status", "200"), ("Connection", "x")])
        let out = HTTP2Translation.trailers(trailers)
        #expect(out.map(\.name) == ["grpc-status", "grpc-message"])
    }
}
