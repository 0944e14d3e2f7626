import Foundation
import GatewayConfig
import GatewayObservability
import GatewayTesting
import Testing

/// The admin listener is no side door (issue 39, items 2 and 3): it answers
/// only a `Host` that names it (a DNS-rebinding page gets 421), only GET and
/// HEAD (405), closes a half-sent request at `limits.header_timeout` and an idle
/// connection at `limits.idle_timeout`, and keeps at most 64 connections open.
@Suite(.timeLimit(.minutes(2)))
struct AdminListenerHardeningTests {
    /// Sends `text` on a fresh admin connection and reads until the gateway closes it.
    static func exchange(_ gateway: GatewayHarness, _ text: String) async throws -> RawResponse? {
        let client = try await RawTCPClient.connect(port: gateway.adminPort)
        try await client.send(text)
        let bytes = try await client.receive(timeout: .seconds(10))
        await client.close()
        return RawResponse(bytes)
    }

    @Test func aForeignHostGets421AndNoTraceData() async throws {
        let upstream = try await TestUpstream.start()
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-admin-host")
        let gateway = try await GatewayHarness.start { config in
            config.debug = true
            config.trace = TraceConfig(file: "\(dir)/trace.jsonl")
        }
        defer {
            Task {
                try? await gateway.stop()
                try? await upstream.shutdown()
                try? FileManager.default.removeItem(atPath: dir)
            }
        }
        let marker = "/echo/admin-rebinding-marker"
        let sent = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", upstream.url(marker)])
        #expect(sent.stdoutString == "200", "\(sent.stderrString)")
        // The admin's own name lists the exchange (the trace writer may take a moment).
        var listed = ""
        for _ in 0..<100 {
            listed = try await ProcessRunner.run("curl", ["-sS", "\(gateway.adminURL)/traces"]).stdoutString
            if listed.contains(marker) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(listed.contains(marker), "\(listed)")

        // The issue's reproduction: a page that rebinds attacker.example to 127.0.0.1.
        let foreign = try await ProcessRunner.run(
            "curl", ["-sS", "-H", "Host: attacker.example:\(gateway.adminPort)", "-w", "\n%{http_code}", "\(gateway.adminURL)/traces"])
        #expect(foreign.stdoutString.hasSuffix("\n421"), "\(foreign.stdoutString)")
        #expect(foreign.stdoutString.contains(#""error":"misdirected_request""#), "\(foreign.stdoutString)")
        #expect(!foreign.stdoutString.contains(marker))
        for path in ["/traces", "/traces.har", "/metrics", "/stats", "/", "/healthz"] {
            for host in ["attacker.example", "attacker.example:\(gateway.adminPort)", "127.0.0.1.attacker.example", "127.1"] {
                let response = try #require(try await Self.exchange(gateway, "GET \(path) HTTP/1.1\r\nHost: \(host)\r\n\r\n"))
                #expect(response.status == 421, "\(host) \(path)")
                #expect(response.header("Content-Type") == "application/json")
                #expect(response.header("X-Gateway-Error") == "misdirected_request")
                #expect(!response.bodyText.contains(marker), "\(host) \(path)")
            }
        }
    }

    @Test func theAdminsOwnNamesAreAnswered() async throws {
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop() } }
        let port = gateway.adminPort
        let hosts = ["localhost:\(port)", "127.0.0.1:\(port)", "[::1]", "[::1]:\(port)", "localhost", "127.0.0.1", "LocalHost:\(port)"]
        for host in hosts {
            let response = try #require(try await Self.exchange(gateway, "GET /healthz HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n"))
            #expect(response.status == 200, "\(host)")
            #expect(response.bodyText == "{\"status\":\"ok\"}\n", "\(host)")
        }
        // HTTP/1.0 without Host (a bare probe): no browser sends that, so it is answered.
        let bare = try #require(try await Self.exchange(gateway, "GET /healthz HTTP/1.0\r\n\r\n"))
        #expect(bare.status == 200)
        let viaCurl = try await ProcessRunner.run("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Host: [::1]:\(port)", "\(gateway.adminURL)/metrics"])
        #expect(viaCurl.stdoutString == "200")
    }

    @Test func namesInAdminHostsAreAnswered() async throws {
        let gateway = try await GatewayHarness.start { config in
            config.listen.adminHosts = ["gateway-1", "metrics.internal"]
        }
        defer { Task { try? await gateway.stop() } }
        for (host, status) in [("gateway-1:9090", 200), ("Metrics.Internal", 200), ("gateway-2:9090", 421)] {
            let response = try #require(try await Self.exchange(gateway, "GET /readyz HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n"))
            #expect(response.status == status, "\(host)")
        }
    }

    @Test func onlyGETAndHEADAreServed() async throws {
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop() } }
        let host = "127.0.0.1:\(gateway.adminPort)"
        for method in ["POST", "PUT", "DELETE", "OPTIONS", "PATCH"] {
            let response = try #require(
                try await Self.exchange(gateway, "\(method) /healthz HTTP/1.1\r\nHost: \(host)\r\nContent-Length: 1\r\n\r\nx"))
            #expect(response.status == 405, "\(method)")
            #expect(response.header("Allow") == "GET, HEAD", "\(method)")
            #expect(response.bodyText.contains(#""error":"method_not_allowed""#), "\(response.bodyText)")
        }
        let post = try await ProcessRunner.run("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-d", "x", "\(gateway.adminURL)/traces"])
        #expect(post.stdoutString == "405")
        // HEAD: the head GET gets, its Content-Length included, and no body.
        let head = try #require(try await Self.exchange(gateway, "HEAD /healthz HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n"))
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "16")
        #expect(head.body.isEmpty)
    }

    @Test func aHalfSentRequestIsClosedAtTheHeaderTimeout() async throws {
        let gateway = try await GatewayHarness.start { config in
            config.limits.headerTimeout = .milliseconds(500)
        }
        defer { Task { try? await gateway.stop() } }
        let client = try await RawTCPClient.connect(port: gateway.adminPort)
        let started = ContinuousClock.now
        try await client.send("GET /traces HTTP/1.1\r\nHost: 127.0.0.1:\(gateway.adminPort)\r\n")
        let bytes = try await client.receive(timeout: .seconds(10))
        let elapsed = ContinuousClock.now - started
        #expect(client.isClosed, "the gateway closed it")
        let response = try #require(RawResponse(bytes), "\(String(decoding: bytes, as: UTF8.self))")
        #expect(response.status == 408)
        #expect(response.header("X-Gateway-Error") == "head_timeout")
        #expect(elapsed >= .milliseconds(400) && elapsed < .seconds(5), "\(elapsed)")

        // A head dripped a byte at a time does not push the deadline back.
        let drip = try await RawTCPClient.connect(port: gateway.adminPort)
        let dripStarted = ContinuousClock.now
        for byte in "GET /metrics HTTP/1.1\r\nHost: localhost\r\nX-Slow: 0123456789012345678901234567890123456789".utf8 {
            if drip.isClosed { break }
            try? await drip.send([byte])
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(await drip.waitForClose(timeout: .seconds(5)))
        #expect(ContinuousClock.now - dripStarted < .seconds(3), "closed at the header timeout, not when the drip ended")
    }

    @Test func anIdleConnectionIsClosedAtTheIdleTimeout() async throws {
        let gateway = try await GatewayHarness.start { config in
            config.limits.idleTimeout = .milliseconds(500)
        }
        defer { Task { try? await gateway.stop() } }
        let silent = try await RawTCPClient.connect(port: gateway.adminPort)
        #expect(await silent.waitForClose(timeout: .seconds(5)))
        let said = try await silent.receive(timeout: .milliseconds(10))
        #expect(said.isEmpty, "closed without a word")

        // After a keep-alive answer, the wait for the next request is bounded too.
        let keptAlive = try await RawTCPClient.connect(port: gateway.adminPort)
        try await keptAlive.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let answered = try await keptAlive.receiveUntil("\r\n\r\n")
        #expect(RawResponse(answered)?.status == 200)
        #expect(await keptAlive.waitForClose(timeout: .seconds(5)))
    }

    @Test func connectionsBeyondTheCapAreClosedAtOnce() async throws {
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop() } }
        let cap = AdminServer.Options.defaultMaxConnections
        var opened: [RawTCPClient] = []
        for _ in 0..<(cap + 2) {
            opened.append(try await RawTCPClient.connect(port: gateway.adminPort))
        }
        let connections = opened
        // Exactly two are closed, within a moment (the idle timeout is 60 s). Which
        // two is not fixed: each is counted when the admin's accept loop sees it.
        let closed = await withTaskGroup(of: Bool.self) { group in
            for connection in connections {
                group.addTask { await connection.waitForClose(timeout: .seconds(3)) }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(closed == 2, "\(cap) stay open, the 2 beyond the cap are closed")
        #expect(gateway.app.adminServer.connectionCount == cap)
        #expect(gateway.logs.text.contains("admin listener: \(cap) connections open"), "\(gateway.logs.text)")

        // An admitted connection is served.
        let open = try #require(connections.first { !$0.isClosed })
        try await open.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        let served = try await open.receive(timeout: .seconds(5))
        #expect(RawResponse(served)?.status == 200)

        // Once they leave, new connections are served again.
        for connection in connections { await connection.close() }
        let deadline = ContinuousClock.now + .seconds(5)
        while gateway.app.adminServer.connectionCount > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(gateway.app.adminServer.connectionCount == 0)
        let health = try await ProcessRunner.run("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "\(gateway.adminURL)/healthz"])
        #expect(health.stdoutString == "200")
    }
}
