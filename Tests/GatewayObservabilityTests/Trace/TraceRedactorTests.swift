import GatewayConfig
import GatewayCore
@testable import GatewayObservability
import NIOHTTP1
import Testing

@Suite("Trace redaction", .timeLimit(.minutes(1)))
struct TraceRedactorTests {
    /// The byte search behind the last line of defence (every secret value, every header value).
    @Test func secretValuesAreFoundByBytesAnywhere() {
        let cases: [(String, String, Bool)] = [
            ("sk-live-123", "sk-live-123", true), ("Bearer sk-live-123", "sk-live-123", true), ("sk-live-123 tail", "sk-live-123", true),
            ("sk-sk-live-12", "sk-live-123", false), ("sksksk-live-123", "sk-live-123", true), ("short", "longer than it", false),
            ("é-secret-€", "secret-€", true), ("", "x", false), ("abc", "", false),
        ]
        for (text, needle, found) in cases {
            #expect(TraceRedactor.contains(text, needle) == found, "\(text) / \(needle)")
        }
    }

    @Test func headersQueryAndBodyFields() {
        var config = GatewayConfig()
        config.trace.redactHeaders = ["X-Custom-Secret"]
        let redactor = TraceRedactor(config: config)
        let headers = HTTPHeaders([("Authorization", "Bearer abc"), ("x-api-key", "k"), ("X-Custom-Secret", "v"), ("Cookie", "c=1"), ("Accept", "*/*")])
        let line = CurlCommand(method: "GET", url: redactor.url(prefix: "http://h", target: "/p?a=1&access_token=S3KR1T&Token=x#f"), headers: redactor.headers(headers), body: .none).line
        #expect(!line.contains("abc") && !line.contains("S3KR1T") && !line.contains("c=1"))
        #expect(line.contains(#""Authorization: ${REDACTED_AUTHORIZATION}""#))
        #expect(line.contains(#""http://h/p?a=1&access_token=${REDACTED_ACCESS_TOKEN}&Token=${REDACTED_TOKEN}#f""#))
        #expect(line.contains("'Accept: */*'"))
        let body = redactor.body(Array(#"{"a":{"password":"p1","refresh_token":"r"},"b":[{"client_secret":"c"}]}"#.utf8), contentType: "application/json")
        let text = String(decoding: body, as: UTF8.self)
        #expect(!text.contains("p1") && !text.contains("\"r\"") && !text.contains("\"c\""))
        let form = redactor.body(Array("grant_type=refresh_token&refresh_token=RT&client_secret=CS".utf8), contentType: "application/x-www-form-urlencoded")
        #expect(String(decoding: form, as: UTF8.self) == "grant_type=refresh_token&refresh_token=[REDACTED]&client_secret=[REDACTED]")
    }

    /// Query names are decoded as they were with Foundation alone (`+`, percent
    /// escapes, Unicode lowercasing); the byte path only takes plain ASCII names.
    @Test(arguments: ["token", "Access_Token", "API-KEY", "x", "", "a+b", "access%5Ftoken", "%7", "T%C3%96KEN", "TÖKEN", "Ключ", "sig%zz"])
    func queryNamesDecodeAsFoundationDecodes(_ name: String) {
        let foundation = (name.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? name).lowercased()
        #expect(TraceRedactor.decodedQueryName(name) == foundation)
    }

    @Test func queryValuesAreRedactedWhateverTheNamesSpelling() {
        let redactor = TraceRedactor(config: GatewayConfig())
        let line = CurlCommand(method: "GET", url: redactor.url(prefix: "http://h", target: "/p?ACCESS_TOKEN=a1&access%5Ftoken=a2&q=&&token&x=1=2&é=v"), headers: [], body: .none).line
        #expect(!line.contains("a1") && !line.contains("a2"))
        #expect(line.contains(#"?ACCESS_TOKEN=${REDACTED_ACCESS_TOKEN}&access%5Ftoken=${REDACTED_ACCESS_TOKEN}&q=&&token&x=1=2&é=v"#))
    }

    @Test func configuredSecretValuesAreScrubbedAnywhere() {
        var config = GatewayConfig()
        config.upstreams = [UpstreamConfig(name: "gh", hosts: [HostPattern("api.github.com")!], auth: AuthConfig(kind: .bearer(token: Secret(source: .env("GITHUB_TOKEN"), value: "ghp_leaky"))))]
        let redactor = TraceRedactor(config: config)
        #expect(redactor.scrub("x ghp_leaky y") == "x [REDACTED:GITHUB_TOKEN] y")
    }

    @Test func redactOffKeepsValues() {
        var config = GatewayConfig()
        config.trace.redact = false
        let redactor = TraceRedactor(config: config)
        #expect(redactor.headers(HTTPHeaders([("Authorization", "Bearer abc")])).first?.value == [.literal("Bearer abc")])
    }
}

/// An upstream's auth header and query names are redacted,
/// also when the client sends its own value (`client_auth: keep`).
@Suite("Trace redaction of upstream auth names", .timeLimit(.minutes(1)))
struct TraceRedactorUpstreamAuthTests {
    static func config() -> GatewayConfig {
        var config = GatewayConfig()
        config.upstreams = [
            UpstreamConfig(
                name: "vendor", hosts: [HostPattern("api.vendor.test")!],
                auth: AuthConfig(kind: .header(name: "X-Vendor-Key", value: Secret(source: .env("VENDOR_KEY"), value: "gateway-key-1")), clientAuth: .keep)
            ),
            UpstreamConfig(
                name: "maps", hosts: [HostPattern("maps.test")!],
                auth: AuthConfig(kind: .query(parameter: "sig", value: Secret(source: .env("MAPS_SIG"), value: "gateway-sig-1")))
            ),
        ]
        return config
    }

    @Test func theClientsOwnValueInAnUpstreamsAuthHeaderIsRedacted() {
        let forms = TraceCurlForms(config: Self.config(), proxyURL: "http://127.0.0.1:8080")
        let request = ProxyRequest(
            method: .GET, scheme: .https, host: "api.vendor.test", port: 443, target: "/v1?sig=client-sig-7",
            headers: ["Host": "api.vendor.test", "X-Vendor-Key": "client-key-7"], upstreamName: "vendor"
        )
        for line in [forms.throughGateway(request, body: .none, bodyLength: nil).line, forms.direct(request, body: .none, bodyLength: nil).line] {
            #expect(!line.contains("client-key-7"), "\(line)")
            #expect(!line.contains("client-sig-7"), "\(line)")
            #expect(line.contains("${REDACTED_X-VENDOR-KEY}") || line.contains("REDACTED_X"), "\(line)")
        }
        #expect(forms.redactor.isRedactedHeader("x-vendor-key"))
    }
}
