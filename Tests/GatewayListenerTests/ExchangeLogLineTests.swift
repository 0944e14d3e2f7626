@testable import GatewayListener
import Testing

/// Issue 15 (low): the log line of a refused request never carries a password.
struct ExchangeLogLineTests {
    @Test(arguments: [
        ("http://user:s3cret-pw@example.com/p?token=abc&x=1", "http://example.com/p?token=&x="),
        ("http://user:s3cret-pw@example.com", "http://example.com"),
        ("HTTPS://a:b@c@example.com:8443/x", "HTTPS://example.com:8443/x"),
        ("user:s3cret-pw@example.com:443", "example.com:443"),
        ("http://example.com/p?next=http://u:p@x", "http://example.com/p?next="),
        ("/relative?a=1", "/relative?a="),
        ("http://example.com/a@b", "http://example.com/a@b"),
    ])
    func userInfoAndQueryValuesAreDropped(_ url: String, _ expected: String) {
        #expect(ExchangeLogLine.withoutQueryValues(url) == expected)
        #expect(!ExchangeLogLine.withoutQueryValues(url).contains("s3cret-pw"))
    }

    @Test func withoutUserInfoKeepsEverythingElse() {
        #expect(ExchangeLogLine.withoutUserInfo("http://u:p@h:81/x?y#z") == "http://h:81/x?y#z")
        #expect(ExchangeLogLine.withoutUserInfo("h:443") == "h:443")
    }
}
