import Foundation
import GatewayConfig
import GatewayCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import Testing
@testable import GatewayObservability

/// Issue 39: a secret the gateway injects, echoed back by the upstream in
/// the form the gateway sent it (a Basic credential's base64, a query value
/// percent-encoded, an OAuth2 token obtained at run time), is scrubbed from
/// `trace.jsonl` and from the HAR export made of it. Failures never print a
/// secret: the checks are booleans with a fixed message.
@Suite("Trace scrubs secrets in every encoding", .timeLimit(.minutes(1)))
struct TraceSecretEncodingsTests {
    /// Secrets obtained at run time, as a token store publishes them (behind a lock).
    final class TokenBox: RuntimeSecretSource {
        let tokens = NIOLockedValueBox<[RuntimeSecret]>([])
        func runtimeSecrets() -> [RuntimeSecret] { tokens.withLockedValue { $0 } }
    }

    static let basicPassword = "pa55-w0rd-basic-7"
    static var basicBase64: String { Data("svc-user:\(basicPassword)".utf8).base64EncodedString() }
    static let queryValue = "k3y/with space&more"
    static var queryEncoded: String { "k3y%2Fwith%20space%26more" }

    static func config() -> GatewayConfig {
        var config = GatewayConfig()
        config.upstreams = [
            UpstreamConfig(
                name: "vendor", hosts: [HostPattern("vendor.test")!],
                auth: AuthConfig(kind: .basic(username: "svc-user", password: Secret(source: .env("VENDOR_PASSWORD"), value: basicPassword)))
            ),
            UpstreamConfig(
                name: "maps", hosts: [HostPattern("maps.test")!],
                auth: AuthConfig(kind: .query(parameter: "key", value: Secret(source: .env("MAPS_KEY"), value: queryValue)))
            ),
        ]
        return config
    }

    /// One traced exchange whose response carries `echoed` header lines; the file's text and the HAR made of it.
    static func trace(_ echoed: [(String, String)], runtime: TokenBox? = nil, id: String = "echo") async throws -> (file: String, har: String) {
        let (dir, file) = try TraceWriterTests.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = TraceWriter(file: file, maxFileBytes: 1 << 20, maxFiles: 1, bufferRecords: 10)
        let observer = TraceObserver(config: config(), writer: writer, proxyURL: "http://127.0.0.1:8080", logger: Logger(label: "quiet"), runtimeSecrets: runtime)
        let request = ProxyRequest(method: .GET, scheme: .http, host: "vendor.test", port: 80, target: "/echo", headers: ["Host": "vendor.test"], upstreamName: "vendor")
        let observation = observer.begin(request, context: RequestContext(id: id, clientAddress: "127.0.0.1:1", logger: Logger(label: "quiet")))
        var lines = ByteBuffer()
        for (name, value) in echoed { lines.writeString("\(name): \(value)\r\n") }
        observation.responseHead(status: 200, fields: ResponseFields(lines: lines, dropped: 0), via: "1.1 gateway")
        observation.finish(ExchangeOutcome(status: 200, responseBytes: 0, error: nil))
        await writer.flush()
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let har = String(decoding: try HARExport.fromFiles.json(TraceFiles.records(file)), as: UTF8.self)
        return (text, har)
    }

    @Test func anEchoedBasicCredentialIsScrubbedInItsBase64Form() async throws {
        let (file, har) = try await Self.trace([("X-Echo-Authorization", "Basic \(Self.basicBase64)"), ("X-Echo-Token", Self.basicBase64)])
        let leaked = file.contains(Self.basicBase64) || har.contains(Self.basicBase64)
        #expect(!leaked, "the Basic credential's base64 is in the trace or the HAR")
        let placeholders = file.contains("Basic [REDACTED:VENDOR_PASSWORD:base64]") && har.contains("[REDACTED:VENDOR_PASSWORD:base64]")
        #expect(placeholders, "the trace and the HAR show the credential's placeholder")
    }

    @Test func anEchoedQueryCredentialIsScrubbedPercentEncoded() async throws {
        let (file, har) = try await Self.trace([("X-Echo-Query", "key=\(Self.queryEncoded)")])
        let leaked = file.contains(Self.queryEncoded) || har.contains(Self.queryEncoded)
        #expect(!leaked, "the percent-encoded query credential is in the trace or the HAR")
        let placeholder = file.contains("key=[REDACTED:MAPS_KEY:percent-encoded]")
        #expect(placeholder, "the trace shows the credential's placeholder")
    }

    /// Tokens are read at each record: one obtained after the observer was
    /// made is scrubbed, and so is the one it replaced.
    @Test func tokensObtainedAtRunTimeAreScrubbed() async throws {
        let runtime = TokenBox()
        let first = "rt-access-token-" + UUID().uuidString
        let second = "rt-access-token-" + UUID().uuidString
        runtime.tokens.withLockedValue { $0 = [RuntimeSecret(value: first, name: "payments_ACCESS_TOKEN")] }
        let (before, harBefore) = try await Self.trace([("X-Echo", "Bearer \(first)")], runtime: runtime)
        var leaked = before.contains(first) || harBefore.contains(first)
        #expect(!leaked, "the run-time token is in the trace or the HAR")
        let placeholder = before.contains("Bearer [REDACTED:PAYMENTS_ACCESS_TOKEN]")
        #expect(placeholder, "the trace shows the token's placeholder")

        runtime.tokens.withLockedValue {
            $0 = [RuntimeSecret(value: second, name: "payments_ACCESS_TOKEN"), RuntimeSecret(value: first, name: "payments_ACCESS_TOKEN")]
        }
        let (after, _) = try await Self.trace([("X-Old", first), ("X-New", second)], runtime: runtime)
        leaked = after.contains(first) || after.contains(second)
        #expect(!leaked, "a current or replaced run-time token is in the trace")
    }

    @Test func theScrubListHoldsEveryEncodingSent() {
        var config = Self.config()
        config.proxyAuth = ProxyAuthConfig(users: [ProxyUser(username: "alice", password: Secret(source: .env("ALICE_PASSWORD"), value: "alice-proxy-pw"))])
        let redactor = TraceRedactor(config: config)
        let proxyBase64 = Data("alice:alice-proxy-pw".utf8).base64EncodedString()
        let basic = redactor.scrub("Basic \(Self.basicBase64)") == "Basic [REDACTED:VENDOR_PASSWORD:base64]"
        #expect(basic, "an upstream's Basic credential")
        let proxy = redactor.scrub("Basic \(proxyBase64)") == "Basic [REDACTED:ALICE_PASSWORD:base64]"
        #expect(proxy, "a proxy user's Basic credential")
        let query = redactor.scrub("?key=\(Self.queryEncoded)") == "?key=[REDACTED:MAPS_KEY:percent-encoded]"
        #expect(query, "a query credential percent-encoded")
        // Bytes that are no UTF-8 are scrubbed too.
        let bytes = redactor.body([0xFF] + Array(" \(Self.basicPassword)".utf8), contentType: "application/octet-stream")
        let scrubbed = bytes == [0xFF] + Array(" [REDACTED:VENDOR_PASSWORD]".utf8)
        #expect(scrubbed, "a secret in bytes that are no UTF-8")
    }
}
