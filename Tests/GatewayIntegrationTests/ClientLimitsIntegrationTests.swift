import Foundation
import GatewayConfig
import GatewayTesting
import Testing

/// Client limits through the live gateway: a client that
/// stops sending its body no longer holds the only upstream connection, and
/// connections beyond `limits.max_client_connections` are refused.
@Suite(.timeLimit(.minutes(1)))
struct ClientLimitsIntegrationTests {
    @Test func aStalledBodyGets408AndTheUpstreamConnectionServesOthers() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            config.pool.maxConnectionsPerHost = 1
            config.pool.requestTimeout = .seconds(30)
            config.limits.bodyTimeout = .seconds(1)
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }
        let stalled = try await gateway.rawConnection()
        try await stalled.send("POST http://127.0.0.1:\(upstream.port)/echo HTTP/1.1\r\nHost: 127.0.0.1:\(upstream.port)\r\nContent-Length: 100000\r\n\r\n0123456789")
        let started = ContinuousClock.now
        let response = try #require(RawResponse(try await stalled.receive(timeout: .seconds(10))))
        #expect(response.status == 408)
        #expect(response.header("X-Gateway-Error") == "body_timeout")
        #expect(ContinuousClock.now - started < .seconds(8), "answered at body_timeout, not at request_timeout")
        #expect(await stalled.waitForClose(timeout: .seconds(5)))

        let other = try await gateway.curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(upstream.port)/echo"])
        #expect(other.stdoutString == "200", "the only upstream connection was given back: \(other.stdoutString)")
    }

    /// An app that leaks idle keep-alive connections from 127.0.0.1 past
    /// `max_connections_per_client` does not lock the address out: the idle
    /// ones are closed, oldest first, and the next request is served.
    @Test func idleConnectionsPastThePerClientCapMakeRoomForTheNextRequest() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            config.limits.maxConnectionsPerClient = 40
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }
        var leaked: [RawTCPClient] = []
        for _ in 0..<60 { leaked.append(try await gateway.rawConnection()) }

        let served = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", upstream.url("/echo")])
        #expect(served.stdoutString == "200", "\(served.stderrString)")
        // 21 idle connections made room (20 for the leaked ones past the cap, one
        // for curl's), the oldest first: the first is among them, the last is not.
        // (Which of two connections made within a moment counts as older depends
        // on which event loop registered it first.)
        let closed = await withTaskGroup(of: Bool.self) { group in
            for connection in leaked { group.addTask { await connection.waitForClose(timeout: .seconds(3)) } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(closed == 21, "\(closed) closed")
        #expect(await leaked[0].waitForClose(timeout: .milliseconds(100)))
        #expect(!(await leaked[59].waitForClose(timeout: .milliseconds(100))))
        #expect(gateway.logs.text.contains("closed an idle keep-alive connection from 127.0.0.1 to admit a new one: limits.max_connections_per_client (40 from that address) reached"), "\(gateway.logs.text)")
        let metrics = try await ProcessRunner.run("curl", ["-sS", "\(gateway.adminURL)/metrics"]).stdoutString
        #expect(!metrics.contains("gateway_client_connections_refused_total{reason=\"max_connections_per_client\"} 1"))
    }

    /// With every connection busy (a request in flight), one over the cap is
    /// refused: closed at once, counted, and logged with the cap.
    @Test func aConnectionOverTheCapWithEveryOneBusyIsRefusedCountedAndLogged() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            config.limits.maxClientConnections = 2
            config.limits.bodyTimeout = .seconds(30)
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }
        let busy = [try await gateway.rawConnection(), try await gateway.rawConnection()]
        for connection in busy {
            // A body that stops coming: the request stays in flight.
            try await connection.send("POST \(upstream.url("/echo")) HTTP/1.1\r\nHost: 127.0.0.1:\(upstream.port)\r\nContent-Length: 100\r\n\r\n0123")
        }
        try await Task.sleep(for: .milliseconds(200))
        let refused = try await gateway.rawConnection()
        #expect(await refused.waitForClose(timeout: .seconds(5)))
        for connection in busy { #expect(!(await connection.waitForClose(timeout: .milliseconds(200)))) }
        let metrics = try await ProcessRunner.run("curl", ["-sS", "\(gateway.adminURL)/metrics"])
        #expect(metrics.stdoutString.contains("gateway_client_connections_refused_total{reason=\"max_client_connections\"} 1"), "\(metrics.stdoutString.split(separator: "\n").filter { $0.contains("refused") })")
        #expect(gateway.logs.text.contains("refused a connection from 127.0.0.1: limits.max_client_connections (2) reached and none of those connections is idle"), "\(gateway.logs.text)")
    }
}
