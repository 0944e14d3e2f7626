import Foundation
import GatewayTesting
import Testing

/// Config errors, SIGHUP reload and graceful drain, with the real executable.
@Suite(.timeLimit(.minutes(2)))
struct LifecycleTests {
    func temporaryFile(_ contents: String) throws -> String {
        let path = TestScratch.path("gw", suffix: ".yaml")
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func config(deny: [String] = []) -> String {
        """
        listen:
          proxy: 127.0.0.1:0
          admin: 127.0.0.1:0
        access:
          allow: ["*"]
          deny: [\(deny.map { "\"\($0)\"" }.joined(separator: ", "))]
        limits:
          drain_timeout: 5s

        """
    }

    @Test func checkConfigNamesFileKeyAndProblem() async throws {
        let path = try temporaryFile("listen:\n  proxy: 127.0.0.1:8080\nupstreams:\n  - name: api\n    hosts: [api.test]\n    tls:\n      pins: [sha256/short]\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let bad = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["check-config", path])
        #expect(bad.status == 2)
        #expect(bad.stderrString.contains(path))
        #expect(bad.stderrString.contains("upstreams[0].tls.pins[0]"))

        let goodPath = try temporaryFile(config())
        defer { try? FileManager.default.removeItem(atPath: goodPath) }
        let good = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["check-config", goodPath])
        #expect(good.status == 0, "\(good.stderrString)")
        #expect(good.stdoutString.contains("listen"))
        // The file may also come from --config or $GATEWAY_CONFIG (as in the Docker image).
        let viaOption = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["check-config", "--config", goodPath])
        #expect(viaOption.status == 0, "\(viaOption.stderrString)")
        var environment = ProcessInfo.processInfo.environment
        environment["GATEWAY_CONFIG"] = path
        let viaEnvironment = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["check-config"], environment: environment)
        #expect(viaEnvironment.status == 2)
        #expect(viaEnvironment.stderrString.contains("upstreams[0].tls.pins[0]"))

        let run = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["run", "--config", path], timeout: .seconds(20))
        #expect(run.status != 0)
        #expect(run.stderrString.contains("upstreams[0].tls.pins[0]"))
    }

    /// `trace` and `ca` need paths from the config, not its secrets: they work from a
    /// shell that does not hold the gateway's tokens; `check-config` still insists.
    @Test func offlineCommandsDoNotNeedTheSecrets() async throws {
        let dir = TestScratch.path("gw-offline")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let withSecrets = config() + """
            state_dir: \(dir)
            trace:
              file: \(dir)/trace.jsonl
            upstreams:
              - name: api
                hosts: [api.test]
                auth: { type: bearer, token_env: GATEWAY_TEST_UNSET_TOKEN }

            """
        let path = try temporaryFile(withSecrets)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var environment = ProcessInfo.processInfo.environment
        environment["GATEWAY_TEST_UNSET_TOKEN"] = nil

        // An empty trace file: `trace list` reads it (no trace file at all is exit 1 with a hint, TraceListTests).
        FileManager.default.createFile(atPath: "\(dir)/trace.jsonl", contents: nil)
        let list = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["trace", "list", "--config", path], environment: environment)
        #expect(list.status == 0, "\(list.stderrString)")
        #expect(!list.stderrString.contains("GATEWAY_TEST_UNSET_TOKEN"), "\(list.stderrString)")
        let export = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["ca", "export", "--config", path], environment: environment)
        #expect(export.status == 0, "\(export.stderrString)")
        #expect(export.stdoutString.contains("BEGIN CERTIFICATE"))
        #expect(export.stderrString.contains("created the interception CA"), "\(export.stderrString)")
        let again = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["ca", "export", "--config", path], environment: environment)
        #expect(again.stdoutString == export.stdoutString)
        #expect(!again.stderrString.contains("created the interception CA"))
        let check = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["check-config", path], environment: environment)
        #expect(check.status == 2)
        #expect(check.stderrString.contains("GATEWAY_TEST_UNSET_TOKEN is not set"), "\(check.stderrString)")
    }

    @Test func aTakenPortNamesTheListenerAndTheAddress() async throws {
        let holder = try await TestUpstream.start()
        defer { Task { try? await holder.shutdown() } }
        let taken = config().replacingOccurrences(of: "proxy: 127.0.0.1:0", with: "proxy: 127.0.0.1:\(holder.port)")
        let path = try temporaryFile(taken)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["run", "--config", path], timeout: .seconds(20))
        #expect(run.status != 0)
        #expect(run.stderrString.contains("cannot listen for the proxy on 127.0.0.1:\(holder.port): the address is already in use"), "\(run.stderrString)")

        // Both listeners on one address is caught before starting.
        let same = config()
            .replacingOccurrences(of: "proxy: 127.0.0.1:0", with: "proxy: 127.0.0.1:28077")
            .replacingOccurrences(of: "admin: 127.0.0.1:0", with: "admin: 127.0.0.1:28077")
        let samePath = try temporaryFile(same)
        defer { try? FileManager.default.removeItem(atPath: samePath) }
        let check = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["check-config", samePath])
        #expect(check.status == 2)
        #expect(check.stderrString.contains("listen.admin"), "\(check.stderrString)")
    }

    @Test func sighupReloadsAndAnInvalidFileKeepsTheOldConfig() async throws {
        let upstream = try await TestUpstream.start()
        defer { Task { try? await upstream.shutdown() } }
        let path = try temporaryFile(config())
        defer { try? FileManager.default.removeItem(atPath: path) }
        let gateway = try GatewayProcess(arguments: ["run", "--config", path])
        let port = try #require(await gateway.listeningPort("proxy"), "\(gateway.log)")
        func status() async throws -> String {
            try await ProcessRunner.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-x", "http://127.0.0.1:\(port)", upstream.url("/status/200")]).stdoutString
        }
        #expect(try await status() == "200")

        try config(deny: ["127.0.0.1"]).write(toFile: path, atomically: true, encoding: .utf8)
        gateway.signal(SIGHUP)
        #expect(await gateway.waitForLog("config reloaded"), "\(gateway.log)")
        #expect(try await status() == "403")

        try "access:\n  alow: [oops]\n".write(toFile: path, atomically: true, encoding: .utf8)
        gateway.signal(SIGHUP)
        #expect(await gateway.waitForLog("config reload refused"), "\(gateway.log)")
        #expect(gateway.log.contains("alow"))
        #expect(try await status() == "403")

        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit() == 0)
    }

    @Test func sigtermDrainsInFlightRequestsThenExitsZero() async throws {
        let upstream = try await TestUpstream.start()
        defer { Task { try? await upstream.shutdown() } }
        let path = try temporaryFile(config())
        defer { try? FileManager.default.removeItem(atPath: path) }
        let gateway = try GatewayProcess(arguments: ["run", "--config", path])
        let port = try #require(await gateway.listeningPort("proxy"), "\(gateway.log)")

        let inFlight = Task {
            try await ProcessRunner.run("curl", ["-s", "-w", " %{http_code}", "-x", "http://127.0.0.1:\(port)", upstream.url("/delay/1500")])
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while upstream.requestsServed == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForLog("draining") == true)
        // New connections are refused while draining.
        let late = try await ProcessRunner.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-x", "http://127.0.0.1:\(port)", upstream.url("/status/200")])
        #expect(late.stdoutString != "200")

        let finished = try await inFlight.value
        #expect(finished.stdoutString == "ok 200", "\(finished.stdoutString) \(gateway.log)")
        #expect(await gateway.waitForExit() == 0)
    }

    /// A request still waiting on its upstream when the drain timeout passes gets
    /// 503 shutting_down, not a connection closed without a word.
    @Test func drainTimeoutAnswers503ToRequestsStillInFlight() async throws {
        let upstream = try await TestUpstream.start()
        defer { Task { try? await upstream.shutdown() } }
        let path = try temporaryFile(config().replacingOccurrences(of: "drain_timeout: 5s", with: "drain_timeout: 1s"))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let gateway = try GatewayProcess(arguments: ["run", "--config", path])
        let port = try #require(await gateway.listeningPort("proxy"), "\(gateway.log)")

        let inFlight = Task {
            try await ProcessRunner.run("curl", ["-s", "-i", "-x", "http://127.0.0.1:\(port)", upstream.url("/delay/6000")], timeout: .seconds(20))
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while upstream.receivedRequests.isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        gateway.signal(SIGTERM)
        let result = try await inFlight.value
        let response = try #require(RawResponse(result.stdout), "\(result.stdoutString) \(gateway.log)")
        #expect(response.status == 503)
        #expect(response.header("X-Gateway-Error") == "shutting_down")
        #expect(response.bodyText.contains("drain_timeout"))
        #expect(await gateway.waitForExit(timeout: .seconds(10)) == 0, "\(gateway.log)")
        #expect(gateway.log.contains("drain timeout: answering 503"))
    }

    /// An idle keep-alive connection on the admin port (a metrics scraper) does
    /// not hold up SIGTERM: the gateway drains and exits.
    @Test func sigtermExitsWhileAnAdminClientHoldsAKeepAliveConnection() async throws {
        let path = try temporaryFile(config())
        defer { try? FileManager.default.removeItem(atPath: path) }
        let gateway = try GatewayProcess(arguments: ["run", "--config", path])
        let admin = try #require(await gateway.listeningPort("admin"), "\(gateway.log)")
        let scraper = try await RawTCPClient.connect(host: "127.0.0.1", port: admin)
        try await scraper.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:\(admin)\r\n\r\n")
        let reply = try await scraper.receive(timeout: .seconds(5))
        #expect(String(decoding: reply, as: UTF8.self).hasPrefix("HTTP/1.1 200"))

        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(10)) == 0, "\(gateway.log)")
        #expect(await scraper.waitForClose(timeout: .seconds(5)))
    }

    @Test func inProcessGracefulShutdownFinishesTheInFlightRequest() async throws {
        let upstream = try await TestUpstream.start()
        defer { Task { try? await upstream.shutdown() } }
        let gateway = try await GatewayHarness.start()
        let inFlight = Task { try await gateway.curl(["-w", " %{http_code}", upstream.url("/delay/800")]) }
        // Shut down once the request has reached the upstream.
        let deadline = ContinuousClock.now + .seconds(10)
        while upstream.requestsServed == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await gateway.stop()
        #expect(try await inFlight.value.stdoutString == "ok 200")
    }
}
