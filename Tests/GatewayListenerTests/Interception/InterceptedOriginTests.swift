import Testing

@testable import GatewayListener

/// Which authorities name the intercepted origin (RFC 9110 §15.5.20): the
/// exact `host` and `host:port` a client sends most (compared as they are),
/// and the spellings that need parsing (case, a trailing dot, IPv6 brackets).
@Suite("InterceptedOrigin: misdirected authorities")
struct InterceptedOriginTests {
    @Test(arguments: ["api.test", "api.test:443", "API.Test", "api.test.", "api.test.:443", "Api.test:443"])
    func theOriginsOwnAuthorityIsNotMisdirected(authority: String) {
        #expect(!InterceptedOrigin(host: "api.test", port: 443).misdirects(authority))
    }

    @Test(arguments: ["other.test", "api.test:8443", "api.tes", "api.test:abc", "xapi.test:443", "api.test:"])
    func anotherHostOrPortIsMisdirected(authority: String) {
        #expect(InterceptedOrigin(host: "api.test", port: 443).misdirects(authority))
    }

    @Test func noAuthorityIsTheOrigins() {
        let origin = InterceptedOrigin(host: "api.test", port: 443)
        #expect(!origin.misdirects(nil))
        #expect(!origin.misdirects(""))
    }

    @Test func ipv6AuthoritiesCompareWithoutBrackets() {
        let origin = InterceptedOrigin(host: "::1", port: 8443)
        #expect(!origin.misdirects("[::1]:8443"))
        #expect(!origin.misdirects("[::1]"))
        #expect(origin.misdirects("[::1]:443"))
        #expect(origin.misdirects("[::2]:8443"))
    }
}
