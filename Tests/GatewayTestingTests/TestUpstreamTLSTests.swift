import GatewayTesting
import NIOSSL
import Testing

@Suite("TestSupport: TestUpstream over TLS")
struct TestSupportUpstreamTLSTests {
    @Test(.timeLimit(.minutes(1)))
    func httpsEchoAndReset() async throws {
        let selfSigned = try await TestSupportSelfSigned.make()
        defer { selfSigned.remove() }
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(selfSigned.certificatePath).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: selfSigned.keyPath, format: .pem))
        )
        let upstream = try await TestUpstream.start(tls: try NIOSSLContext(configuration: configuration))
        #expect(upstream.baseURL == "https://127.0.0.1:\(upstream.port)")

        let echo = try await testSupportCurl(["--cacert", selfSigned.certificatePath, "-H", "X-One: 1", upstream.url("/echo")])
        #expect(echo.status == 0, "\(echo.stderrString)")
        #expect(try EchoResponseBody.decode(echo.stdout).headers.contains(["X-One", "1"]))

        let bytes = try await testSupportCurl(["--cacert", selfSigned.certificatePath, upstream.url("/bytes/200000")])
        #expect(bytes.stdout == TestUpstream.pattern(count: 200_000))

        let reset = try await testSupportCurl(["--cacert", selfSigned.certificatePath, "-o", "/dev/null", upstream.url("/reset-after/5000")])
        #expect([18, 56].contains(reset.status), "curl exit \(reset.status): \(reset.stderrString)")
        try await upstream.shutdown()
    }
}
