import Foundation
import GatewayConfig
import GatewayCore
import Testing

@Suite("redactedYAML")
struct RedactionTests {
    static let pin = "sha256/JStvnrjFa9vTUqIZRP7dLfgSR+VQx+xqujOL1qhe+Yk="

    static func yaml(passwordFile: String) -> String {
        """
        listen:
          proxy: "[::]:3128"
          admin: 127.0.0.1:0
        log_level: warning
        state_dir: "/tmp/state dir"
        debug: true
        access:
          allow: [api.example.com, "*.example.org"]
          deny: [no.example.org]
          connect_ports: [443, 8443]
        proxy_auth:
          realm: corp
          users:
            - username: env-user
              password_env: GW_PW
            - username: file-user
              password_file: \(passwordFile)
            - username: inline-user
              password: "inline-SECRET-3"
        limits:
          max_head_bytes: 16KB
          header_timeout: 250ms
          idle_timeout: 2m
          drain_timeout: 1h
        pool:
          max_connections_per_host: 3
          idle_timeout: 45
          connect_timeout: 1500ms
          request_timeout: 90s
        upstreams:
          - name: api
            hosts: [api.example.com, "*.api.example.com"]
            origin: https://api.example.com:8443
            tls:
              pins: [\(pin)]
              pin_mode: report
              insecure_skip_verify: true
          - name: plain
            hosts: ["*.example.org"]
            origin: http://[::1]:8081
        """
    }

    @Test func neverContainsSecretValuesAndRoundTrips() throws {
        let file = try TestSupport.temporaryFile(named: "pw", contents: "file-SECRET-2\n")
        defer { TestSupport.removeDirectory(of: file) }
        let env = ["GW_PW": "env-SECRET-1"]
        let original = try ConfigLoader.parse(yaml: Self.yaml(passwordFile: file.path), file: "a.yaml", environment: env)

        let redacted = original.redactedYAML()
        #expect(!redacted.contains("SECRET"), "\(redacted)")
        #expect(redacted.contains("GW_PW"))
        #expect(redacted.contains(file.path))
        #expect(redacted.contains("<redacted>"))

        let reloaded = try ConfigLoader.parse(yaml: redacted, file: "b.yaml", environment: env)
        // Everything but the inline password survives the round trip.
        var expected = original
        expected.proxyAuth?.users[2].password = Secret(source: .inline, value: "<redacted>")
        #expect(reloaded == expected)
    }

    @Test func defaultsRoundTrip() throws {
        let yaml = GatewayConfig().redactedYAML()
        #expect(try ConfigLoader.parse(yaml: yaml, file: "d.yaml", environment: [:]) == GatewayConfig())
        #expect(yaml.contains("proxy: 127.0.0.1:8080") || yaml.contains("proxy: \"127.0.0.1:8080\""))
        #expect(yaml.contains("max_head_bytes: 32KiB"))
        #expect(yaml.contains("header_timeout: 10s"))
    }

    @Test func awkwardStringsAreQuoted() throws {
        var config = GatewayConfig()
        config.stateDir = "a: #b \"c\" \\ true\n"
        config.open = true
        config.listen.proxy = BindAddress(host: "0.0.0.0", port: 1)
        let reloaded = try ConfigLoader.parse(yaml: config.redactedYAML(), file: "q.yaml", environment: [:])
        #expect(reloaded == config)
        for text in ["true", "null", "123", "-x", "*", "~", "yes", ""] {
            config.stateDir = text.isEmpty ? "." : text
            #expect(try ConfigLoader.parse(yaml: config.redactedYAML(), file: "q.yaml", environment: [:]).stateDir == config.stateDir)
        }
    }
}
