import GatewayTesting
import GatewayConfig
import GatewayCore
import GatewayObservability
import NIOHTTP1
import Testing

/// A trace's curl line read back: the words the shell would see, with
/// variables as `${NAME}` text.
@Suite("Curl line read back", .timeLimit(.minutes(1)))
struct CurlLineRequestTests {
    static let awkward = #"it's "quoted" $HOME `cmd` \ back!slash ${X} %41 [1]{2}"#

    @Test func wordsAreWhatTheShellSees() throws {
        let parts: [[ShellQuoting.Part]] = [
            [.literal(Self.awkward)],
            [.literal("Bearer "), .variable("API_TOKEN"), .literal("!\"\\$")],
            [.literal("")],
            [.literal("line\nbreak\ttab")],
        ]
        let line = parts.map(ShellQuoting.word).joined(separator: " ")
        let words = try #require(CurlLineRequest.words(line))
        #expect(words == [Self.awkward, "Bearer ${API_TOKEN}!\"\\$", "", "line\nbreak\ttab"])
        #expect(words == parts.map(ShellQuoting.template))
        #expect(CurlLineRequest.words("curl 'open") == nil)
    }

    @Test func throughGatewayLineReadsBackAsTheRequest() throws {
        var config = GatewayConfig()
        config.proxyAuth = ProxyAuthConfig(users: [ProxyUser(username: "dev", password: Secret(source: .env("GW_PASS"), value: "pw-123456"))])
        let forms = TraceCurlForms(config: config, proxyURL: "http://127.0.0.1:8080")
        let headers: HTTPHeaders = [
            "Host": "api.test", "Authorization": "Bearer client-secret", "X-Note": Self.awkward, "X-Empty": "", "X-Dup": "1", "X-Dup": "2",
            "Content-Type": "application/json", "Content-Length": "9",
        ]
        let request = ProxyRequest(method: .PUT, scheme: .http, host: "api.test", port: 80, target: "/a?token=abc&q=%20x", headers: RequestFields.lines(headers), body: .empty)
        let line = forms.throughGateway(request, body: .inline("{\"a\":\"'\"}"), bodyLength: 9).line
        let parsed = try #require(CurlLineRequest(line: line))
        #expect(parsed.method == "PUT")
        #expect(parsed.url == "http://api.test/a?token=${REDACTED_TOKEN}&q=%20x", "\(line)")
        #expect(parsed.headers.map(\.name) == ["Host", "Authorization", "X-Note", "X-Empty", "X-Dup", "X-Dup", "Content-Type", "Content-Length"])
        #expect(parsed.headers[1].value == "${REDACTED_AUTHORIZATION}")
        #expect(parsed.headers[2].value == Self.awkward)
        #expect(parsed.headers[3].value == "")
        #expect(parsed.body == .inline("{\"a\":\"'\"}"))
        #expect(!line.contains("client-secret") && !line.contains("pw-123456"))
    }

    @Test func bodiesInFilesAndNotCaptured() throws {
        let forms = TraceCurlForms(config: GatewayConfig(), proxyURL: "http://127.0.0.1:8080")
        let request = ProxyRequest(method: .POST, scheme: .http, host: "h", port: 80, target: "/", headers: [:], body: .empty)
        let file = try #require(CurlLineRequest(line: forms.throughGateway(request, body: .file("/tmp/it's/1.bin"), bodyLength: 3).line))
        #expect(file.body == .file("/tmp/it's/1.bin"))
        #expect(file.method == nil, "POST with a body: curl infers it")
        let streamed = try #require(CurlLineRequest(line: forms.throughGateway(request, body: .notCaptured(123_456), bodyLength: nil).line))
        #expect(streamed.body == .notCaptured(123_456))
        let head = ProxyRequest(method: .HEAD, scheme: .http, host: "h", port: 80, target: "/", headers: [:], body: .empty)
        #expect(CurlLineRequest(line: forms.throughGateway(head, body: .none, bodyLength: nil).line)?.method == "HEAD")
    }
}
