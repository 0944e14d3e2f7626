import Foundation
import GatewayTesting
import Testing

/// `gateway faults|mocks|replay on|off|reset|list` against the real binary
/// (issue 55): faults switched off let requests through and on again inject,
/// without a restart and without touching the config file; a SIGHUP reload
/// keeps the switch; `list` tells the rules, their rate, direction and seed;
/// the admin page shows what acts; no web page can flip the switch.
@Suite(.timeLimit(.minutes(3)))
struct InjectionSwitchTests {
    static let config = """
        listen:
          proxy: 127.0.0.1:0
          admin: 127.0.0.1:0
        access:
          allow: ["*"]
        upstreams:
          - name: api
            hosts: [127.0.0.1]
            faults:
              seed: 7
              rules:
                - endpoint: GET /custom/flaky
                  error: 503
                - endpoint: /custom/slow
                  rate: 0.25
                  toward: policies
                  latency: {min: 1s, max: 2s}
          - name: future
            hosts: [api.future.invalid]
            mocks:
              enabled: false
              unmatched: block
              rules:
                - endpoint: GET /hello
                  response: {status: 200, body: mocked}

        """

    /// A running gateway on `config`, its admin URL, and a function that runs the CLI against it.
    struct Running {
        let process: GatewayProcess
        let proxy: String
        let admin: String
        let configPath: String

        func cli(_ arguments: [String]) async throws -> ProcessResult {
            try await ProcessRunner.run(GatewayProcess.executableURL.path, arguments + ["--admin", admin], timeout: .seconds(30))
        }

        func status(_ url: String) async throws -> String {
            try await ProcessRunner.run(
                "curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-x", proxy, url], environment: ["NO_PROXY": "", "no_proxy": ""]
            ).stdoutString
        }
    }

    static func start() async throws -> Running {
        let dir = try TraceTests.tempDir()
        let configPath = "\(dir)/gateway.yaml"
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        let process = try GatewayProcess(arguments: ["run", "--config", configPath])
        let proxy = try #require(await process.listeningPort("proxy"), "\(process.log)")
        let admin = try #require(await process.listeningPort("admin"), "\(process.log)")
        return Running(process: process, proxy: "http://127.0.0.1:\(proxy)", admin: "http://127.0.0.1:\(admin)", configPath: configPath)
    }

    @Test func faultsSwitchOffAndOnWithoutARestartAndAReloadKeepsTheSwitch() async throws {
        let upstream = try await TestUpstream.start()
        upstream.setResponder { _ in .text("ok\n") }
        let gateway = try await Self.start()
        defer {
            gateway.process.signal(SIGTERM)
            Task { try? await upstream.shutdown() }
        }
        let before = try String(contentsOfFile: gateway.configPath, encoding: .utf8)
        #expect(try await gateway.status(upstream.url("/custom/flaky")) == "503", "the fault fires as configured")

        let off = try await gateway.cli(["faults", "off"])
        #expect(off.status == 0, "\(off.stderrString)")
        #expect(off.stdoutString.contains("upstream api: faults off (switched off; the config has enabled: true)"), "\(off.stdoutString)")
        #expect(try await gateway.status(upstream.url("/custom/flaky")) == "200", "switched off: the request passes")
        #expect(await gateway.process.waitForLog("faults switched off for every upstream"), "\(gateway.process.log)")

        gateway.process.signal(SIGHUP)
        #expect(await gateway.process.waitForLog("config reloaded"), "\(gateway.process.log)")
        #expect(try await gateway.status(upstream.url("/custom/flaky")) == "200", "a reload keeps the switch")

        let on = try await gateway.cli(["faults", "on"])
        #expect(on.status == 0, "\(on.stderrString)")
        #expect(try await gateway.status(upstream.url("/custom/flaky")) == "503", "switched on again")

        let list = try await gateway.cli(["faults", "list"])
        #expect(list.status == 0, "\(list.stderrString)")
        #expect(list.stdoutString == """
            upstream api: faults on (switched on; the config has enabled: true), seed 7
              GET /custom/flaky  error 503  rate 1  toward app
              /custom/slow  latency 1s..2s  rate 0.25  toward policies

            """, "\(list.stdoutString)")
        #expect(try String(contentsOfFile: gateway.configPath, encoding: .utf8) == before, "the config file is untouched")
        #expect(upstream.requestsServed == 2, "only the two requests made while off reached the upstream")
    }

    @Test func mocksDisabledInTheConfigAreSwitchedOnForOneUpstreamThenReset() async throws {
        let gateway = try await Self.start()
        defer { gateway.process.signal(SIGTERM) }
        let mocked = "http://api.future.invalid/hello"
        #expect(try await gateway.status(mocked) != "200", "enabled: false: nothing answers for the made-up host")

        let unknown = try await gateway.cli(["mocks", "on", "--upstream", "nope"])
        #expect(unknown.status == 1)
        #expect(unknown.stderrString.contains("upstream nope configures no mocks (upstreams with mocks: future)"), "\(unknown.stderrString)")
        let none = try await gateway.cli(["replay", "on"])
        #expect(none.status == 1 && none.stderrString.contains("no upstream configures replay"), "\(none.stderrString)")

        let on = try await gateway.cli(["mocks", "on", "--upstream", "future"])
        #expect(on.status == 0, "\(on.stderrString)")
        #expect(on.stdoutString.contains("upstream future: mocks on (switched on; the config has enabled: false), unmatched: block"), "\(on.stdoutString)")
        #expect(on.stdoutString.contains("  GET /hello  200"))
        #expect(try await gateway.status(mocked) == "200")

        let page = try await ProcessRunner.run("curl", ["-sS", "\(gateway.admin)/"]).stdoutString
        #expect(page.contains("mocks, replay, faults and recording"))
        #expect(page.contains(#"<tr class="injection on"><td class="l">future</td><td class="l">mocks</td>"#), "the page shows the switched mocks")
        #expect(page.contains(#"<tr class="injection on"><td class="l">api</td><td class="l">faults</td>"#))
        #expect(page.contains("GET /custom/flaky  error 503  rate 1  toward app"))

        let reset = try await gateway.cli(["mocks", "reset"])
        #expect(reset.status == 0, "\(reset.stderrString)")
        #expect(reset.stdoutString.contains("upstream future: mocks off (enabled: false in the config)"), "\(reset.stdoutString)")
        #expect(try await gateway.status(mocked) != "200")

        let json = try await gateway.cli(["faults", "list", "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any], "\(json.stdoutString)")
        let upstreams = report["upstreams"] as? [[String: Any]] ?? []
        #expect(upstreams.map { $0["name"] as? String } == ["api", "future"])
        #expect(((upstreams.first?["faults"] as? [String: Any])?["seed"] as? Int) == 7)
    }

    /// The switch takes a POST only from a script: a browser page (an `Origin`,
    /// or no `X-Gateway-Admin-Action`, which it cannot send cross-site without
    /// a preflight the admin refuses) gets 403; other methods 405.
    @Test func noWebPageCanFlipTheSwitch() async throws {
        let gateway = try await Self.start()
        defer { gateway.process.signal(SIGTERM) }
        func post(_ headers: [String]) async throws -> String {
            try await ProcessRunner.run(
                "curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST"] + headers.flatMap { ["-H", $0] } + ["\(gateway.admin)/injection/faults/off"]
            ).stdoutString
        }
        #expect(try await post([]) == "403")
        #expect(try await post(["X-Gateway-Admin-Action: 1", "Origin: http://attacker.example"]) == "403")
        #expect(try await post(["Content-Type: application/x-www-form-urlencoded"]) == "403")
        let preflight = try await ProcessRunner.run("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "OPTIONS", "\(gateway.admin)/injection/faults/off"])
        #expect(preflight.stdoutString == "405")
        #expect(try await post(["X-Gateway-Admin-Action: 1"]) == "200", "a script's POST is answered")
        #expect(try await post(["X-Gateway-Admin-Action: 1", "Host: attacker.example"]) == "421", "a rebound name is refused first")
    }
}
