import Foundation
import GatewayConfig
import Testing

/// One load reports every mistake of a file (decoding and validation), each
/// with its key path; a value that could not be read causes no second report.
@Suite struct CollectedIssuesTests {
    static let manyMistakes = """
        listen:
          proxy: 127.0.0.1:8080
          admn: 127.0.0.1:9090
        limits:
          header_timeout: soon
          max_client_connections: 0
        upstreams:
          - name: api
            hosts: [api.example.com]
            auth:
              type: beaerer
          - name: github
            hosts: [api.github.com]
            auth:
              type: bearer
              token_env: API_TOKEN
            retry:
              attempts: 0
          - name: slow
            hosts: [slow.example.com]
            http_version: http3
            rate_limit:
              requests_per_second: fast

        """

    @Test func everyMistakeIsListedWithItsKeyPathInOneLoad() throws {
        let error = try #require(TestSupport.error(of: Self.manyMistakes))
        let expected: [(String, String)] = [
            ("listen.admn", #"did you mean "admin"?"#),
            ("limits.header_timeout", "expected a duration like 10s or 250ms, got 'soon'"),
            ("upstreams[0].auth.type", "got 'beaerer'"),
            ("upstreams[1].auth.token_env", "environment variable API_TOKEN is not set"),
            ("upstreams[2].http_version", "expected one of: auto, http1, http2; got 'http3'"),
            ("upstreams[2].rate_limit.requests_per_second", "expected a number"),
            ("limits.max_client_connections", "must be at least 1, got 0"),
            ("upstreams[1].retry.attempts", "must be at least 1"),
        ]
        #expect(error.issues.map(\.keyPath) == expected.map(\.0), "\(error)")
        for (issue, (_, fragment)) in zip(error.issues, expected) {
            #expect(issue.message.contains(fragment), "\(issue)")
        }
        // Each line names the file and the key.
        #expect(error.lines.count == expected.count)
        for (line, (keyPath, _)) in zip(error.lines, expected) {
            #expect(line.hasPrefix("\(TestSupport.file): \(keyPath): "), "\(line)")
        }
    }

    @Test func aMisspeltEnumValueSuggestsTheClosestAndListsTheAllowedOnes() throws {
        let yaml = "upstreams:\n  - name: api\n    hosts: [a.example]\n    auth: { type: beaerer, token: t }\n"
        TestSupport.expectError(yaml, keyPath: "upstreams[0].auth.type", contains: #"did you mean "bearer"?"#)
        TestSupport.expectError(yaml, keyPath: "upstreams[0].auth.type", contains: "expected one of: bearer, header, basic, query, oauth2")
        TestSupport.expectError("log_level: wraning\n", keyPath: "log_level", contains: #"did you mean "warning"?"#)
        TestSupport.expectError(
            "shared_state:\n  postgres: { url: postgres://u@h/d, tls: verify_full }\n", keyPath: "shared_state.postgres.tls",
            contains: #"did you mean "verify-full"?"#)
        // Nothing close: the list alone.
        let far = try #require(TestSupport.error(of: "log_level: loud\n"))
        #expect(!far.message.contains("did you mean"), "\(far)")
    }

    @Test func aValueThatCouldNotBeReadIsNotReportedAgainByValidation() throws {
        // The bad size stands in as the default; the bad name of the first
        // upstream keeps the second at its own index.
        let yaml = """
            limits: { max_head_bytes: lots }
            upstreams:
              - hosts: [a.example]
              - name: b
                hosts: [b.example]
                retry: { attempts: 0 }
              - name: b
                hosts: [c.example]

            """
        let error = try #require(TestSupport.error(of: yaml))
        #expect(
            error.issues.map(\.keyPath) == ["limits.max_head_bytes", "upstreams[0]", "upstreams[1].retry.attempts", "upstreams[2].name"],
            "\(error)")
        #expect(error.issues[1].message == "missing required key 'name'")
    }

    @Test func unsetSecretsPassWithoutReadingThemAndFailWhenRead() throws {
        let yaml = """
            proxy_auth:
              users: [{ username: dev, password_env: PROXY_PASSWORD }]
            upstreams:
              - name: api
                hosts: [api.example.com]
                auth: { type: bearer, token_env: API_TOKEN }
              - name: files
                hosts: [files.example.com]
                auth: { type: basic, username: u, password_file: /nonexistent/gateway-test-secret }

            """
        let skipped = try ConfigLoader.parse(yaml: yaml, file: "ci.yaml", environment: [:], secrets: .skip)
        #expect(skipped.upstreams.count == 2)

        let error = #expect(throws: ConfigError.self) {
            try ConfigLoader.parse(yaml: yaml, file: "ci.yaml", environment: [:], secrets: .resolve)
        }
        #expect(
            error?.issues.map(\.keyPath) == [
                "proxy_auth.users[0].password_env", "upstreams[0].auth.token_env", "upstreams[1].auth.password_file",
            ], "\(String(describing: error))")
        #expect(error?.description.contains("environment variable API_TOKEN is not set") == true)
        #expect(error?.description.contains("environment variable PROXY_PASSWORD is not set") == true)
        #expect(error?.description.contains("secret file /nonexistent/gateway-test-secret does not exist") == true)

        // The other checks still run without the secrets.
        let broken = yaml.replacingOccurrences(of: "name: files", with: "name: api")
        let duplicate = #expect(throws: ConfigError.self) {
            try ConfigLoader.parse(yaml: broken, file: "ci.yaml", environment: [:], secrets: .skip)
        }
        #expect(duplicate?.issues.map(\.keyPath) == ["upstreams[1].name"])
    }

    @Test func aSetSecretsValueNeverAppearsInTheListedIssues() throws {
        let value = "s3cr3t-value-\(UUID().uuidString)"
        let yaml = """
            upstreams:
              - name: api
                hosts: [api.example.com]
                auth: { type: bearer, token_env: API_TOKEN, name: X }
                retry: { attempts: -1 }

            """
        let error = try #require(TestSupport.error(of: yaml, environment: ["API_TOKEN": value + "\n"]))
        #expect(error.issues.count == 3, "\(error)")
        #expect(!error.description.contains(value))
    }
}
