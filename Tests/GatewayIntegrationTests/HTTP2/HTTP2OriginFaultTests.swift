import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// An HTTP/2 origin that breaks its connection or sends fields HTTP/1.1
/// cannot carry: the client gets a clear 502 at once, never a wait for
/// `request_timeout` nor a field an HTTP/1.1 client must not see.
@Suite(.timeLimit(.minutes(1)))
struct HTTP2OriginFaultTests {
    func gateway(for origin: HTTP2TestOrigin) async throws -> GatewayHarness {
        try await GatewayHarness.start { config in
            config.upstreams = [UpstreamConfig(
                name: "h2", hosts: [HostPattern("h2.test")!],
                origin: UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: origin.port), httpVersion: .http2
            )]
            config.pool.requestTimeout = .seconds(30)
        }
    }

    /// A header block past the gateway's limit is a connection error
    /// (its HPACK state is lost): the connection closes and the stream in
    /// flight fails at once, where it waited 60 s for 504.
    @Test func anOversizedHeaderBlockFailsTheStreamAtOnce() async throws {
        let origin = try await HTTP2TestOrigin.start()
        let gateway = try await gateway(for: origin)
        defer { Task { try? await gateway.stop(); try? await origin.shutdown() } }
        let started = ContinuousClock.now
        let result = try await gateway.curl(["-D", "-", "-o", "/dev/null", "http://h2.test/huge-head/1000000"], timeout: .seconds(25))
        #expect(ContinuousClock.now - started < .seconds(10), "answered at once, not at request_timeout")
        #expect(result.stdoutString.hasPrefix("HTTP/1.1 502"), "\(result.stdoutString)")
        #expect(result.stdoutString.lowercased().contains("x-gateway-error: connection_reset"), "\(result.stdoutString)")
        // The next request opens a new connection and is served.
        let next = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://h2.test/ok"])
        #expect(next.stdoutString == "200")
    }

    /// A header block the gateway cannot decode (HPACK index 0) is a
    /// connection error, and an origin that keeps the connection open after
    /// the gateway's GOAWAY does not end the stream: the gateway closes the
    /// connection itself (RFC 9113 §5.4.1), so the stream in flight fails at
    /// once instead of waiting for `request_timeout` (30 s here).
    @Test func aConnectionErrorFailsTheStreamsInFlightAtOnce() async throws {
        let origin = try await RawTCPServer.start { connection in
            _ = try await connection.receiveUntil("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            // SETTINGS (none), then, once the request is in, HEADERS for stream 1 whose block is HPACK index 0.
            try await connection.send([0, 0, 0, 4, 0, 0, 0, 0, 0])
            try await Task.sleep(for: .milliseconds(300))
            try await connection.send([0, 0, 1, 1, 4, 0, 0, 0, 1, 0x80])
            try await Task.sleep(for: .seconds(40))  // never closes on its own
        }
        let gateway = try await GatewayHarness.start { config in
            config.upstreams = [UpstreamConfig(
                name: "h2", hosts: [HostPattern("h2.test")!],
                origin: UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: origin.port), httpVersion: .http2
            )]
            config.pool.requestTimeout = .seconds(30)
        }
        defer { Task { try? await gateway.stop(); try? await origin.shutdown() } }
        let started = ContinuousClock.now
        let result = try await gateway.curl(["-D", "-", "-o", "/dev/null", "http://h2.test/broken"], timeout: .seconds(40))
        #expect(ContinuousClock.now - started < .seconds(10), "answered at once, not at request_timeout")
        #expect(result.stdoutString.hasPrefix("HTTP/1.1 502"), "\(result.stdoutString)")
    }

    /// HTTP/2 frames a control byte in a field value; HTTP/1.1 does not allow
    /// it (RFC 9110 §5.5): an origin's `\x01` is the upstream's protocol
    /// error, never passed to an HTTP/1.1 client as it is.
    @Test func anOriginFieldWithAControlByteIs502() async throws {
        let origin = try await HTTP2TestOrigin.start()
        let gateway = try await gateway(for: origin)
        defer { Task { try? await gateway.stop(); try? await origin.shutdown() } }
        let client = try await gateway.rawConnection()
        try await client.send("GET http://h2.test/control-byte HTTP/1.1\r\nHost: h2.test\r\n\r\n")
        let bytes = try await client.receiveUntil("\r\n\r\n", timeout: .seconds(10))
        #expect(!bytes.contains(0x01), "no control byte reaches the client")
        let head = String(decoding: bytes, as: UTF8.self)
        #expect(head.hasPrefix("HTTP/1.1 502"), "\(head)")
        #expect(head.lowercased().contains("x-gateway-error: upstream_protocol_error"), "\(head)")
    }

    /// An origin's body that is longer or shorter than its `content-length`
    /// is a malformed response (RFC 9113 §8.1.1): the HTTP/1.1 client gets the
    /// head and no byte beyond what the length allows, then the connection
    /// closes (it cannot be reused with a body short), and the exchange ends
    /// as `upstream_protocol_error`.
    @Test(arguments: [(10, 20, 0), (10, 4, 4), (10, 0, 0)])
    func aBodyThatIsNotItsContentLengthIsCutShort(declared: Int, sent: Int, reachesClient: Int) async throws {
        let origin = try await HTTP2TestOrigin.start()
        let gateway = try await gateway(for: origin)
        defer { Task { try? await gateway.stop(); try? await origin.shutdown() } }
        let result = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code} %{size_download}", "http://h2.test/wrong-length/\(declared)/\(sent)"], timeout: .seconds(20))
        #expect(result.status == 18, "curl: transfer closed with bytes remaining: \(result.status) \(result.stderrString)")
        #expect(result.stdoutString == "200 \(reachesClient)", "\(result.stdoutString)")
        #expect(gateway.logs.text.contains("aborted: upstream_protocol_error"), "\(gateway.logs.text)")
    }
}
