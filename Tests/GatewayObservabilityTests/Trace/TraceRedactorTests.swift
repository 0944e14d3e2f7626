import GatewayConfig
import GatewayCore
import GatewayObservability
import NIOHTTP1
import Testing

@Suite("Trace redaction", .timeLimit(.minutes(1)))
struct TraceRedactorTests {
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
