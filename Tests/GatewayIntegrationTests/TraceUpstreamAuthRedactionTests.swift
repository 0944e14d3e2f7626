import Foundation
import GatewayConfig
import GatewayCore
import GatewayObservability
import GatewayTesting
import Testing

/// Through the live gateway: with `auth: {type: header, name: X-Vendor-Key,
/// client_auth: keep}` and debug on, the client's own X-Vendor-Key value is in
/// neither the stderr curl line nor trace.jsonl.
@Suite(.timeLimit(.minutes(2)))
struct TraceUpstreamAuthRedactionTests {
    @Test func theClientsValueOfAnUpstreamAuthHeaderIsRedacted() async throws {
        let upstream = try await TestUpstream.start()
        defer { Task { try? await upstream.shutdown() } }
        let dir = try TraceTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clientKey = "client-vendor-key-5150"
        let gateway = try await GatewayHarness.start { config in
            config.debug = true
            config.trace = TraceConfig(file: "\(dir)/trace.jsonl")
            config.upstreams = [UpstreamConfig(
                name: "vendor", hosts: [HostPattern("vendor.test")!],
                origin: UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: upstream.port),
                auth: AuthConfig(kind: .header(name: "X-Vendor-Key", value: Secret(source: .env("VENDOR_KEY"), value: "gateway-vendor-key-1")), clientAuth: .keep)
            )]
        }
        let result = try await gateway.curl(["-o", "/dev/null", "-H", "X-Vendor-Key: \(clientKey)", "http://vendor.test/echo"])
        #expect(result.status == 0, "\(result.stderrString)")
        #expect(upstream.receivedRequests.last?.header("X-Vendor-Key") == clientKey, "keep: the client's own key is sent")
        let record = try #require(try await TraceTests.readRecords("\(dir)/trace.jsonl", count: 1).first)
        #expect(record.curl.contains("X-Vendor-Key"), "\(record.curl)")
        let fileText = try String(contentsOfFile: "\(dir)/trace.jsonl", encoding: .utf8)
        #expect(!fileText.contains(clientKey))
        #expect(await logEventually(gateway, contains: "trace \(record.id): curl -x"))
        #expect(!gateway.logs.text.contains(clientKey))
        try await gateway.stop()
    }
}
