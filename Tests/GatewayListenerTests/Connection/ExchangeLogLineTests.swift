@testable import GatewayListener
import NIOHTTP1
import Testing

/// The log line of a refused request never carries a password.
struct ExchangeLogLineTests {
    @Test(arguments: [
        ("http://user:s3cret-pw@example.com/p?token=abc&x=1", "http://example.com/p?token=&x="),
        ("http://user:s3cret-pw@example.com", "http://example.com"),
        ("HTTPS://a:b@c@example.com:8443/x", "HTTPS://example.com:8443/x"),
        ("user:s3cret-pw@example.com:443", "example.com:443"),
        ("http://example.com/p?next=http://u:p@x", "http://example.com/p?next="),
        ("/relative?a=1", "/relative?a="),
        ("http://example.com/a@b", "http://example.com/a@b"),
        ("http://h/p?a=1=2&&b&é=ü#f&c=3", "http://h/p?a=&&b&é=&c="),
        ("http://h/p?", "http://h/p?"),
    ])
    func userInfoAndQueryValuesAreDropped(_ url: String, _ expected: String) {
        #expect(ExchangeLogLine.withoutQueryValues(url) == expected)
        #expect(!ExchangeLogLine.withoutQueryValues(url).contains("s3cret-pw"))
    }

    @Test func withoutUserInfoKeepsEverythingElse() {
        #expect(ExchangeLogLine.withoutUserInfo("http://u:p@h:81/x?y#z") == "http://h:81/x?y#z")
        #expect(ExchangeLogLine.withoutUserInfo("h:443") == "h:443")
    }

    /// The line names the method as string interpolation would, without its reflection.
    @Test(arguments: [
        HTTPMethod.GET, .HEAD, .POST, .PUT, .DELETE, .PATCH, .OPTIONS, .CONNECT, .TRACE, .PROPFIND, .MSEARCH,
        .RAW(value: "BREW"), .RAW(value: "GET"),
    ])
    func methodTextIsWhatInterpolationWrote(_ method: HTTPMethod) {
        #expect(ExchangeLogLine.text(of: method) == "\(method)")
    }
}
