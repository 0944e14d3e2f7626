import Foundation
import GatewayTesting
import Testing

/// `gateway check-config` (the real binary) lists every problem of a file in
/// one run and exits 2; `--no-secrets` checks a file whose secrets are not set.
@Suite struct CheckConfigAllProblemsTests {
    static let config = """
        listen:
          proxy: 127.0.0.1:0
          admin: 127.0.0.1:0
          admn: 127.0.0.1:9090
        upstreams:
          - name: api
            hosts: [api.example.com]
            auth:
              type: beaerer
          - name: github
            hosts: [api.github.com]
            auth: { type: bearer, token_env: GATEWAY_TEST_UNSET_TOKEN }
            retry: { attempts: 0 }

        """

    static func temporaryConfig(_ text: String) throws -> String {
        let path = TestScratch.path("check-config", suffix: ".yaml")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(.timeLimit(.minutes(1))) func everyProblemIsPrintedInOneRunWithExitStatus2() async throws {
        let path = try Self.temporaryConfig(Self.config)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await ProcessRunner.run(
            GatewayProcess.executableURL.path, ["check-config", path], environment: ["GATEWAY_TEST_UNSET_TOKEN": ""], timeout: .seconds(30))
        #expect(result.status == 2, "\(result.stderrString)")
        let lines = result.stderrString.split(separator: "\n").map(String.init)
        #expect(lines.first == "gateway: invalid config: 4 problems in \(path)", "\(result.stderrString)")
        for expected in [
            "\(path): listen.admn: unknown key 'admn'",
            "\(path): upstreams[0].auth.type: expected one of: bearer, header, basic, query, oauth2; got 'beaerer' (did you mean \"bearer\"?)",
            "\(path): upstreams[1].auth.token_env: environment variable GATEWAY_TEST_UNSET_TOKEN is empty",
            "\(path): upstreams[1].retry.attempts: must be at least 1",
        ] {
            #expect(lines.contains { $0.hasPrefix(expected) }, "missing \(expected) in:\n\(result.stderrString)")
        }
        #expect(result.stdoutString.isEmpty)
    }

    @Test(.timeLimit(.minutes(1))) func noSecretsChecksTheRestWithoutTheVariables() async throws {
        let valid = """
            listen:
              proxy: 127.0.0.1:0
              admin: 127.0.0.1:0
            upstreams:
              - name: api
                hosts: [api.example.com]
                auth: { type: bearer, token_env: GATEWAY_TEST_UNSET_TOKEN }
              - name: github
                hosts: [api.github.com]
                auth: { type: bearer, token_env: GATEWAY_TEST_UNSET_TOKEN }

            """
        let path = try Self.temporaryConfig(valid)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let environment = ProcessInfo.processInfo.environment.filter { $0.key != "GATEWAY_TEST_UNSET_TOKEN" }

        let without = try await ProcessRunner.run(
            GatewayProcess.executableURL.path, ["check-config", path], environment: environment, timeout: .seconds(30),
            inheritEnvironment: false)
        #expect(without.status == 2, "\(without.stderrString)")
        #expect(without.stderrString.contains("upstreams[0].auth.token_env: environment variable GATEWAY_TEST_UNSET_TOKEN is not set"))
        #expect(without.stderrString.contains("upstreams[1].auth.token_env: environment variable GATEWAY_TEST_UNSET_TOKEN is not set"))

        let skipped = try await ProcessRunner.run(
            GatewayProcess.executableURL.path, ["check-config", "--no-secrets", path], environment: environment, timeout: .seconds(30),
            inheritEnvironment: false)
        #expect(skipped.status == 0, "\(skipped.stderrString)")
        #expect(skipped.stderrString.contains("\(path): OK (secrets not read)"), "\(skipped.stderrString)")
        #expect(skipped.stdoutString.contains("token_env: GATEWAY_TEST_UNSET_TOKEN"), "\(skipped.stdoutString)")
    }
}
