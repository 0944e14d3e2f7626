import Foundation
import GatewayConfig
import Testing

@Suite("Shipped config files")
struct ConfigFilesTests {
    /// Environment variables the examples document in their header comments.
    static let exampleEnvironment = [
        "GATEWAY_PROXY_PASSWORD": "example-password",
        "CI_PROXY_PASSWORD": "example-ci-password",
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
        for name in ["upstream-tls-pinning.yaml", "proxy-auth.yaml", "allow-deny.yaml"] {
            #expect(Self.examples.contains(name), "missing config/examples/\(name)")
        }
    }

    @Test(arguments: examples)
    func exampleLoads(name: String) throws {
        let path = Self.configDirectory.appendingPathComponent("examples").appendingPathComponent(name).path
        let config = try ConfigLoader.load(path: path, environment: Self.exampleEnvironment)
        // Every example survives a redacted round trip (none uses an inline password).
        #expect(try ConfigLoader.parse(yaml: config.redactedYAML(), file: name, environment: Self.exampleEnvironment) == config)
    }

    @Test func everyEnvironmentVariableAnExampleNeedsIsDocumentedInIt() throws {
        for name in Self.examples {
            let url = Self.configDirectory.appendingPathComponent("examples").appendingPathComponent(name)
            let text = try String(contentsOf: url, encoding: .utf8)
            let comments = text.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("#") }
            for line in text.split(separator: "\n") where line.contains("password_env:") && !line.contains("#") {
                let variable = line.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)
                #expect(comments.contains { $0.contains(variable) }, "\(name) does not document \(variable)")
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
}
