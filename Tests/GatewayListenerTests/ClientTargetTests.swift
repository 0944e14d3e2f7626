@testable import GatewayListener
import NIOHTTP1
import Testing

struct ClientTargetTests {
    @Test(arguments: [
        ("http://example.com/path?q=1", ClientTarget.absolute(scheme: .http, host: "example.com", port: 80, target: "/path?q=1")),
        ("http://Example.COM:8081", .absolute(scheme: .http, host: "example.com", port: 8081, target: "/")),
        ("HTTP://h?x", .absolute(scheme: .http, host: "h", port: 80, target: "/?x")),
        ("https://h/a#frag", .absolute(scheme: .https, host: "h", port: 443, target: "/a")),
        ("http://[::1]:8080/x", .absolute(scheme: .http, host: "::1", port: 8080, target: "/x")),
        ("/metrics", .origin("/metrics")),
    ])
    func parsesRequestTargets(_ uri: String, _ expected: ClientTarget) {
        #expect(ClientTarget.parse(uri, isConnect: false) == expected)
    }

    @Test(arguments: ["ftp://h/", "http://user:pw@h/", "http://h:0/", "http://h:99999/", "http://h:8a/", "http:///x", "http://bad host/", "*"])
    func refusesMalformedTargets(_ uri: String) {
        #expect(ClientTarget.parse(uri, isConnect: false) == nil)
    }

    /// Found by the target-parser fuzz target (issue 15): `hasPrefix("/")`
    /// compares characters, and `/` followed by a combining mark is another
    /// one, so such an origin-form target (a request inside an intercepted
    /// tunnel) was refused as malformed.
    @Test func originFormIsRecognisedByItsFirstByte() {
        #expect(ClientTarget.parse("/\u{301}x", isConnect: false) == .origin("/\u{301}x"))
        #expect(ClientTarget.parse("/\u{6D7}", isConnect: false) == .origin("/\u{6D7}"))
    }

    @Test func parsesConnectAuthority() {
        #expect(ClientTarget.parse("api.test:443", isConnect: true) == .authority(host: "api.test", port: 443))
        #expect(ClientTarget.parse("[::1]:8443", isConnect: true) == .authority(host: "::1", port: 8443))
        #expect(ClientTarget.parse("api.test", isConnect: true) == nil)
    }
}

struct RequestHeadValidatorTests {
    func head(_ headers: HTTPHeaders, version: HTTPVersion = .http1_1) -> HTTPRequestHead {
        HTTPRequestHead(version: version, method: .POST, uri: "http://h/", headers: headers)
    }

    @Test func framing() throws {
        #expect(try RequestHeadValidator.framing(of: head([:])) == .none)
        #expect(try RequestHeadValidator.framing(of: head(["Content-Length": "0"])) == .none)
        #expect(try RequestHeadValidator.framing(of: head(["Content-Length": "12"])) == .length(12))
        #expect(try RequestHeadValidator.framing(of: head(["Content-Length": "12", "Content-Length": "12"])) == .length(12))
        #expect(try RequestHeadValidator.framing(of: head(["Transfer-Encoding": "chunked"])) == .chunked)
    }

    @Test(arguments: [
        HTTPHeaders([("Content-Length", "3"), ("Transfer-Encoding", "chunked")]),
        HTTPHeaders([("Content-Length", "3"), ("Content-Length", "4")]),
        HTTPHeaders([("Transfer-Encoding", "gzip")]),
        HTTPHeaders([("Transfer-Encoding", "chunked, gzip")]),
        HTTPHeaders([("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")]),
        HTTPHeaders([("Content-Length", "-1")]),
        HTTPHeaders([("Content-Length", "1e3")]),
    ])
    func ambiguousFramingIsRefused(_ headers: HTTPHeaders) {
        #expect(throws: (any Error).self) { try RequestHeadValidator.framing(of: head(headers)) }
    }

    @Test func transferEncodingInHTTP10IsRefused() {
        #expect(throws: (any Error).self) {
            try RequestHeadValidator.framing(of: head(["Transfer-Encoding": "chunked"], version: .http1_0))
        }
    }
}

struct RequestRouterHostTests {
    @Test func hostIsReplacedInPlaceOrAddedFirst() {
        let replaced = RequestRouter.settingHost("up:81", in: ["A": "1", "Host": "client", "B": "2", "host": "dup"])
        #expect(replaced.map { "\($0.name)=\($0.value)" } == ["A=1", "Host=up:81", "B=2"])
        let added = RequestRouter.settingHost("up", in: ["A": "1"])
        #expect(added.map { "\($0.name)=\($0.value)" } == ["Host=up", "A=1"])
    }

    @Test func logLinesDropQueryValues() {
        #expect(ExchangeLogLine.withoutQueryValues("http://h/p?token=abc&x=1&flag") == "http://h/p?token=&x=&flag")
        #expect(ExchangeLogLine.withoutQueryValues("http://h/p") == "http://h/p")
    }
}
