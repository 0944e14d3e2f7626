import Foundation
import GatewayConfig
import Testing

@Suite("Shipped config files")
struct ConfigFilesTests {
    /// Environment variables the examples document in their header comments.
    static let exampleEnvironment = [
        "GATEWAY_PROXY_PASSWORD": "example-password",
        "CI_PROXY_PASSWORD": "example-ci-password",
        "GITHUB_TOKEN": "example-github-token",
        "WEATHER_API_KEY": "example-weather-key",
        "REPORTS_PASSWORD": "example-reports-password",
        "PAY_CLIENT_ID": "example-pay-client",
        "PAY_CLIENT_SECRET": "example-pay-secret",
        "PAY_REFRESH_TOKEN": "example-pay-refresh",
        "REPORTING_CLIENT_SECRET": "example-reporting-secret",
        "API_TOKEN": "example-api-token",
        "GATEWAY_DATABASE_URL": "postgres://gateway:example-db-password@db.internal:5432/gateway",
        "OTLP_API_KEY": "example-otlp-key",
    ]

    static var configDirectory: URL { TestSupport.repositoryRoot().appendingPathComponent("config") }

    static var examples: [String] {
        let directory = configDirectory.appendingPathComponent("examples")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.sorted()
    }

    @Test func gatewayYAMLLoadsWithoutEnvironmentAndIsTheSafeDefault() throws {
        let path = Self.configDirectory.appendingPathComponent("gateway.yaml").path
        let config = try ConfigLoader.load(path: path, environment: [:])
        #expect(config.listen.proxy == BindAddress(host: "127.0.0.1", port: 8080))
        #expect(config.listen.admin == BindAddress(host: "127.0.0.1", port: 9090))
        #expect(config.listen.proxy.isLoopback)
        #expect(config.access.isAllowed(host: "example.com"))
        #expect(config == GatewayConfig())
    }

    @Test func theExpectedExamplesExist() {
        for name in [
            "upstream-tls-pinning.yaml", "proxy-auth.yaml", "allow-deny.yaml", "auth-bearer.yaml", "oauth2.yaml",
            "retry-rate-limit.yaml", "metrics-endpoints.yaml", "debug-trace.yaml", "interception.yaml",
        ] {
            #expect(Self.examples.contains(name), "missing config/examples/\(name)")
        }
    }

    @Test(arguments: examples)
    func exampleLoads(name: String) throws {
        let path = Self.configDirectory.appendingPathComponent("examples").appendingPathComponent(name).path
        let config = try ConfigLoader.load(path: path, environment: Self.exampleEnvironment)
        // Every example survives a redacted round trip (none uses an inline secret).
        let redacted = config.redactedYAML()
        #expect(try ConfigLoader.parse(yaml: redacted, file: name, environment: Self.exampleEnvironment) == config)
        for value in Self.exampleEnvironment.values { #expect(!redacted.contains(value)) }
        // Examples show good practice: nothing to warn about.
        #expect(config.warnings == [])
    }

    @Test func everyEnvironmentVariableAnExampleNeedsIsDocumentedInIt() throws {
        for name in Self.examples {
            let url = Self.configDirectory.appendingPathComponent("examples").appendingPathComponent(name)
            let text = try String(contentsOf: url, encoding: .utf8)
            let comments = text.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("#") }
            for line in text.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("#") {
                for variable in Self.environmentVariables(in: String(line)) {
                    #expect(comments.contains { $0.contains(variable) }, "\(name) does not document \(variable)")
                }
            }
        }
    }

    /// The names after every `<key>_env:` on a line, flow style included.
    static func environmentVariables(in line: String) -> [String] {
        line.components(separatedBy: "_env:").dropFirst().compactMap { rest in
            let name = rest.drop(while: { $0 == " " }).prefix(while: { $0.isLetter || $0.isNumber || $0 == "_" })
            return name.isEmpty ? nil : String(name)
        }
    }

    @Test func eachExampleNeedsExactlyTheVariablesItDocuments() throws {
        for name in ["auth-bearer.yaml", "oauth2.yaml", "debug-trace.yaml", "interception.yaml"] {
            let path = Self.configDirectory.appendingPathComponent("examples").appendingPathComponent(name).path
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let used = Set(text.split(separator: "\n").flatMap { Self.environmentVariables(in: String($0)) })
            #expect(!used.isEmpty)
            for variable in used {
                var environment = Self.exampleEnvironment
                environment[variable] = nil
                let error = #expect(throws: ConfigError.self) { try ConfigLoader.load(path: path, environment: environment) }
                #expect(error?.message == "environment variable \(variable) is not set", "\(name)")
            }
        }
    }

    @Test func proxyAuthExampleNeedsItsVariables() {
        let path = Self.configDirectory.appendingPathComponent("examples/proxy-auth.yaml").path
        let error = #expect(throws: ConfigError.self) { try ConfigLoader.load(path: path, environment: [:]) }
        #expect(error?.message.contains("GATEWAY_PROXY_PASSWORD is not set") == true)
    }

    @Test func examplesShowcaseTheirFeature() throws {
        let dir = Self.configDirectory.appendingPathComponent("examples")
        let pinning = try ConfigLoader.load(path: dir.appendingPathComponent("upstream-tls-pinning.yaml").path, environment: [:])
        #expect(pinning.upstreams.contains { !$0.tls.pins.isEmpty })
        let auth = try ConfigLoader.load(path: dir.appendingPathComponent("proxy-auth.yaml").path, environment: Self.exampleEnvironment)
        #expect(auth.proxyAuth?.users.isEmpty == false)
        let allowDeny = try ConfigLoader.load(path: dir.appendingPathComponent("allow-deny.yaml").path, environment: [:])
        #expect(allowDeny.access.isAllowed(host: "api.github.com"))
        #expect(!allowDeny.access.isAllowed(host: "gist.github.com"))
        #expect(!allowDeny.access.isAllowed(host: "example.com"))
    }

    static func example(_ name: String) throws -> GatewayConfig {
        try ConfigLoader.load(
            path: configDirectory.appendingPathComponent("examples").appendingPathComponent(name).path, environment: exampleEnvironment)
    }

    @Test func featureExamplesShowcaseTheirFeature() throws {
        let bearer = try Self.example("auth-bearer.yaml")
        #expect(bearer.upstream(named: "github")?.auth?.kind == .bearer(token: Secret(source: .env("GITHUB_TOKEN"), value: "example-github-token")))
        #expect(bearer.upstreams.map { $0.auth?.typeName } == ["bearer", "header", "basic"])

        let oauth = try Self.example("oauth2.yaml")
        guard case .oauth2(let payments) = oauth.upstream(named: "payments")?.auth?.kind,
            case .oauth2(let reporting) = oauth.upstream(named: "reporting")?.auth?.kind
        else {
            Issue.record("oauth2.yaml has no oauth2 upstreams")
            return
        }
        #expect(payments.grant == .refreshToken && payments.refreshToken != nil)
        #expect(reporting.grant == .clientCredentials && reporting.clientAuthMethod == .clientSecretPost)

        let retry = try Self.example("retry-rate-limit.yaml")
        #expect(retry.upstream(named: "api")?.retry?.deadline == .seconds(30))
        #expect(retry.upstream(named: "api")?.rateLimit?.burst == 20)
        #expect(retry.upstream(named: "partner")?.rateLimit?.requestsPerSecond == nil)

        let metrics = try Self.example("metrics-endpoints.yaml")
        #expect(metrics.metrics.maxEndpointsPerUpstream == 100)
        #expect(metrics.upstreams.first?.endpoint(method: "GET", path: "/users/42/orders/7")?.description == "GET /users/{id}/orders/{order_id}")

        let trace = try Self.example("debug-trace.yaml")
        #expect(trace.debug && trace.trace.redact && trace.trace.redactHeaders.contains("X-Custom-Token"))

        let interception = try Self.example("interception.yaml")
        #expect(interception.upstream(named: "github")?.intercept == true)
        #expect(interception.upstream(named: "bank")?.intercept == false)
        #expect(interception.interception.leafCacheSize == 500)
    }

    /// The `trace:` comment of gateway.yaml names every built-in redacted
    /// header, query parameter and JSON field (the defaults it documents).
    @Test func gatewayYAMLDocumentsTheBuiltInRedactionLists() throws {
        let text = try String(contentsOf: Self.configDirectory.appendingPathComponent("gateway.yaml"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.hasPrefix("trace:") })
        let end = try #require(lines[start...].firstIndex { $0.contains("redact: true") })
        // The comment's words, without the punctuation around them.
        let words = Set(lines[start..<end].joined(separator: " ").split { $0 == " " || $0 == "," || $0 == ";" || $0 == "#" }.map(String.init))
        let names = TraceConfig.builtInRedactHeaders + TraceConfig.builtInRedactQuery + TraceConfig.builtInRedactJSONFields
        for name in names {
            #expect(words.contains(name), "gateway.yaml's trace comment does not name \(name)")
        }
    }

    /// The commented upstream keys in gateway.yaml (from `endpoints` on) are
    /// valid YAML for the current schema once uncommented.
    @Test func gatewayYAMLDocumentsValidUpstreamKeys() throws {
        let text = try String(contentsOf: Self.configDirectory.appendingPathComponent("gateway.yaml"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.contains("# Path templates naming endpoints") })
        let body = lines[start...].map { line in line.hasPrefix("  # ") ? "  " + line.dropFirst(4) : String(line) }
        let yaml = "upstreams:\n  - name: api\n    hosts: [api.example.com]\n" + body.joined(separator: "\n")
        let config = try ConfigLoader.parse(yaml: yaml, file: "gateway.yaml", environment: ["GITHUB_TOKEN": "t"])
        let upstream = try #require(config.upstreams.first)
        #expect(upstream.endpoints.count == 3)
        #expect(upstream.auth?.typeName == "bearer")
        #expect(upstream.retry == RetryConfig(perTryTimeout: .seconds(10), deadline: .seconds(30)))
        #expect(upstream.rateLimit == RateLimitConfig(requestsPerSecond: 10, burst: 20))
    }
}
