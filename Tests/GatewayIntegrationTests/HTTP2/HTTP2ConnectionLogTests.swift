import Foundation
import GatewayTesting
import Testing

/// Issue 54: each closed intercepted HTTP/2 connection logs one line, at
/// debug when it closed as connections do and at info only when it was
/// abuse (a flood NIOHTTP2 answered with GOAWAY, the client's GOAWAY for an error).
@Suite(.timeLimit(.minutes(3)))
struct HTTP2ConnectionLogTests {
    let interception = InterceptionTests()
    static let closeLine = "closed HTTP/2 connection"

    /// The connection lines, once one is there and a moment passed for any other.
    func connectionLines(_ gateway: GatewayHarness) async throws -> [String] {
        let deadline = ContinuousClock.now + .seconds(10)
        while !gateway.logs.all.contains(where: { $0.contains(Self.closeLine) }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(500))
        return gateway.logs.all.filter { $0.contains(Self.closeLine) }
    }

    @Test func aConnectionTheClientClosesLogsOneDebugLine() async throws {
        let f = try await interception.fixture()
        let gateway = try await GatewayHarness.start(interception.configure(f))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        let result = try await gateway.curl([
            "--http2", "--cacert", f.caPath, "-o", "/dev/null", "-o", "/dev/null", "-w", "%{http_version} %{response_code}", "\(f.url)/echo?n=1", "\(f.url)/echo?n=2",
        ])
        #expect(result.stdoutString == "2 2002 200", "\(result.stderrString)")
        let lines = try await connectionLines(gateway)
        #expect(lines.count == 1, "one line per connection: \(lines)")
        #expect(lines.allSatisfy { $0.hasPrefix("debug ") }, "\(lines)")
        // Nothing else at info about the connection: only the two exchanges' lines.
        let info = gateway.logs.all.filter { $0.hasPrefix("info ") && !$0.contains("/echo?n=") }
        #expect(!info.contains { $0.localizedCaseInsensitiveContains("HTTP/2") || $0.contains("closed") }, "\(info)")
    }

    @Test func aFloodLogsOneInfoLine() async throws {
        let f = try await interception.fixture()
        let gateway = try await GatewayHarness.start(interception.configure(f))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        var env = f.h2ClientEnvironment(gateway)
        env["COUNT"] = "10000"
        let run = try await ProcessRunner.run("python3", ["-c", HTTP2ClientScripts.rapidReset], environment: env, timeout: .seconds(60))
        #expect(run.status == 0, "\(run.stderrString)")
        let lines = try await connectionLines(gateway)
        #expect(lines.count == 1, "one line per connection: \(lines)")
        #expect(lines.first?.hasPrefix("info \(Self.closeLine): too many stream resets") == true, "\(lines)")
    }

    @Test func theClientsGoAwayForAnErrorLogsOneInfoLine() async throws {
        let f = try await interception.fixture()
        let gateway = try await GatewayHarness.start(interception.configure(f))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        let script = HTTP2ClientScripts.connect + """
            list(events(0.5))
            conn.close_connection(error_code=1)
            sock.sendall(conn.data_to_send())
            time.sleep(0.2)
            sock.close()
            print(json.dumps({"sent": True}))
            """
        let run = try await ProcessRunner.run("python3", ["-c", script], environment: f.h2ClientEnvironment(gateway), timeout: .seconds(30))
        #expect(run.status == 0, "\(run.stderrString)")
        let lines = try await connectionLines(gateway)
        #expect(lines.count == 1, "one line per connection: \(lines)")
        #expect(lines.first?.hasPrefix("info \(Self.closeLine): the client's GOAWAY") == true, "\(lines)")
    }
}
