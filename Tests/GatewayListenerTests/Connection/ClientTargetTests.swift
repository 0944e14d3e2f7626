import GatewayTesting
import GatewayCore
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

    /// Found by the target-parser fuzz target: `hasPrefix("/")`
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

struct RequestRouterHostTests {
    @Test func hostIsKeptInPlaceOrReplacedFirst() {
        let replaced = RequestRouter.endToEndHeaders(of: ["A": "1", "Host": "client", "B": "2", "host": "dup"], authority: "up:81")
        #expect(replaced.map { "\($0.name)=\($0.value)" } == ["Host=up:81", "A=1", "B=2"])
        let kept = RequestRouter.endToEndHeaders(of: .lines("A: 1\r\nHost: up:81\r\nB: 2\r\nhost: up:81\r\n"), authority: "up:81")
        #expect(kept.map { "\($0.name)=\($0.value)" } == ["A=1", "Host=up:81", "B=2"])
        let added = RequestRouter.endToEndHeaders(of: ["A": "1"], authority: "up")
        #expect(added.map { "\($0.name)=\($0.value)" } == ["Host=up", "A=1"])
    }

    /// One copy drops what ``HopByHopHeaders/removeAll(from:)`` and the
    /// `Expect` removal dropped, in any case, and keeps the order and
    /// duplicates of everything else.
    @Test(arguments: [false, true])
    func endToEndHeadersDropHopByHopNamedAndExpect(asLines: Bool) {
        let pairs: KeyValuePairs<String, String> = [
            "Accept": "a", "connection": "Keep-Alive, X-Secret , close", "Keep-Alive": "timeout=5",
            "x-secret": "s", "Host": "client", "EXPECT": "100-continue", "TE": "trailers",
            "Proxy-Authorization": "Basic eA==", "Upgrade": "websocket", "Accept": "b", "Cookie": "c=1",
        ]
        let headers = HTTPHeaders(pairs.map { ($0.key, $0.value) })
        let fields = asLines ? RequestFields.lines(headers) : RequestFields(headers)
        let result = RequestRouter.endToEndHeaders(of: fields, authority: "up")
        // The client's Host says another authority: dropped, and the gateway's put first.
        #expect(result.map { "\($0.name)=\($0.value)" } == ["Host=up", "Accept=a", "Accept=b", "Cookie=c=1"])
        var removed = headers
        HopByHopHeaders.removeAll(from: &removed)
        removed.remove(name: "expect")
        removed.replaceOrAdd(name: "Host", value: "up")
        #expect(Set(result.map { "\($0.name)=\($0.value)" }) == Set(removed.map { "\($0.name)=\($0.value)" }))
        // `Connection: host` does not take the Host field away.
        let connectionHost: KeyValuePairs<String, String> = ["Connection": "host", "Host": "c"]
        let connectionHostFields = asLines ? RequestFields.lines(HTTPHeaders(connectionHost.map { ($0.key, $0.value) })) : RequestFields(HTTPHeaders(connectionHost.map { ($0.key, $0.value) }))
        #expect(RequestRouter.endToEndHeaders(of: connectionHostFields, authority: "up").map(\.value) == ["up"])
        // A Host that names the authority stays in its place; none at all gets one.
        let sameHost: KeyValuePairs<String, String> = ["Host": "up:8080", "Accept": "a", "TE": "trailers"]
        let sameHostFields = asLines ? RequestFields.lines(HTTPHeaders(sameHost.map { ($0.key, $0.value) })) : RequestFields(HTTPHeaders(sameHost.map { ($0.key, $0.value) }))
        #expect(RequestRouter.endToEndHeaders(of: sameHostFields, authority: "up:8080").map(\.name) == ["Host", "Accept"])
        let noHost: KeyValuePairs<String, String> = ["Accept": "a"]
        let noHostFields = asLines ? RequestFields.lines(HTTPHeaders(noHost.map { ($0.key, $0.value) })) : RequestFields(HTTPHeaders(noHost.map { ($0.key, $0.value) }))
        #expect(RequestRouter.endToEndHeaders(of: noHostFields, authority: "up").map(\.name) == ["Host", "Accept"])
    }

    /// The connection's fate after a request, as NIOHTTP1's `isKeepAlive` and
    /// `isUpgradeLike` read it, without `canonicalForm`.
    @Test(arguments: [
        ([:], HTTPVersion.http1_1, true),
        ([:], .http1_0, false),
        (["Connection": "close"], .http1_1, false),
        (["connection": "Keep-Alive"], .http1_0, true),
        (["Connection": "keep-alive, close"], .http1_1, false),
        (["Connection": "keep-alive", "Connection": "keep-alive"], .http1_0, false),
        (["Connection": "x-other"], .http1_1, true),
        (["Connection": "Upgrade", "Upgrade": "websocket"], .http1_1, false),
    ] as [(HTTPHeaders, HTTPVersion, Bool)])
    func keepsConnectionAsNIOReadsIt(_ headers: HTTPHeaders, _ version: HTTPVersion, _ expected: Bool) {
        let request = ClientRequestHead(version: version, method: .GET, uri: "http://h/", headers: headers)
        #expect(request.keepsConnection == expected)
        let nio = HTTPRequestHead(version: version, method: .GET, uri: "http://h/", headers: headers)
        #expect(request.keepsConnection == (nio.isKeepAlive && !request.isUpgradeLike))
        let lines = ClientRequestHead(
            version: version, method: .GET, uri: "http://h/",
            headers: RequestFields.lines(headers.map { "\($0.name): \($0.value)\r\n" }.joined())
        )
        #expect(lines.keepsConnection == expected)
    }

    @Test func logLinesDropQueryValues() {
        #expect(LoggedText.withoutQueryValues("http://h/p?token=abc&x=1&flag") == "http://h/p?token=&x=&flag")
        #expect(LoggedText.withoutQueryValues("http://h/p") == "http://h/p")
    }
}
