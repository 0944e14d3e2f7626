import Foundation
import GatewayConfig
import GatewayCore
import Logging
import Testing

@Suite("Full example")
struct FullExampleTests {
    static let pinA = "sha256/t+RrJf6iZSp23mXk9gOWos7bnmcAqEtmon+IhMOY/CM="
    static let pinB = "sha256/JStvnrjFa9vTUqIZRP7dLfgSR+VQx+xqujOL1qhe+Yk="

    static func yaml(caFile: String) -> String {
        """
        listen:
          proxy: 0.0.0.0:3128
          admin: "[::1]:0"
        open: false
        log_level: debug
        state_dir: /var/lib/gateway
        debug: true
        access:
          allow: [api.example.com, "*.cdn.example.com"]
          deny: [blocked.cdn.example.com]
          connect_ports: [443, 8443]
        proxy_auth:
          realm: corp
          users:
            - username: dev
              password_env: GATEWAY_PROXY_PASSWORD
            - username: ci
              password: inline-secret
        limits:
          max_head_bytes: 64KiB
          header_timeout: 2s
          idle_timeout: 2m
          drain_timeout: 1h
        pool:
          max_connections_per_host: 8
          idle_timeout: 90
          connect_timeout: 1500ms
          request_timeout: 30s
        upstreams:
          - name: api
            hosts: [api.example.com]
            origin: https://api.example.com
            tls:
              pins: [\(pinA), \(pinB)]
              pin_mode: report
              ca_file: \(caFile)
              insecure_skip_verify: true
          - name: mock_2
            hosts: ["*.cdn.example.com"]
            origin: http://127.0.0.1:8081/
        """
    }

    @Test func decodesEveryField() throws {
        let ca = try TestSupport.temporaryFile(named: "ca.pem", contents: "-----BEGIN CERTIFICATE-----\n")
        defer { TestSupport.removeDirectory(of: ca) }
        let env = ["GATEWAY_PROXY_PASSWORD": "s3cret-env"]
        let config = try ConfigLoader.parse(yaml: Self.yaml(caFile: ca.path), file: "full.yaml", environment: env)

        let expected = GatewayConfig(
            listen: ListenConfig(
                proxy: BindAddress(host: "0.0.0.0", port: 3128),
                admin: BindAddress(host: "::1", port: 0)
            ),
            open: false,
            logLevel: .debug,
            stateDir: "/var/lib/gateway",
            debug: true,
            access: AccessConfig(
                allow: [HostPattern("api.example.com")!, HostPattern("*.cdn.example.com")!],
                deny: [HostPattern("blocked.cdn.example.com")!],
                connectPorts: [443, 8443]
            ),
            proxyAuth: ProxyAuthConfig(
                realm: "corp",
                users: [
                    ProxyUser(username: "dev", password: Secret(source: .env("GATEWAY_PROXY_PASSWORD"), value: "s3cret-env")),
                    ProxyUser(username: "ci", password: Secret(source: .inline, value: "inline-secret")),
                ]
            ),
            limits: ListenerLimits(
                maxHeadBytes: 65536,
                headerTimeout: .seconds(2),
                idleTimeout: .seconds(120),
                drainTimeout: .seconds(3600)
            ),
            pool: PoolConfig(
                maxConnectionsPerHost: 8,
                idleTimeout: .seconds(90),
                connectTimeout: .milliseconds(1500),
                requestTimeout: .seconds(30)
            ),
            upstreams: [
                UpstreamConfig(
                    name: "api",
                    hosts: [HostPattern("api.example.com")!],
                    origin: UpstreamOrigin(scheme: .https, host: "api.example.com", port: 443),
                    tls: UpstreamTLSSettings(
                        pins: [SPKIPin(Self.pinA)!, SPKIPin(Self.pinB)!],
                        pinMode: .report,
                        caFile: ca.path,
                        insecureSkipVerify: true
                    )
                ),
                UpstreamConfig(
                    name: "mock_2",
                    hosts: [HostPattern("*.cdn.example.com")!],
                    origin: UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: 8081)
                ),
            ]
        )
        #expect(config == expected)
        #expect(config.listen.proxy.isLoopback == false)
        #expect(config.listen.admin.description == "[::1]:0")
    }

    @Test func upstreamForHostPicksFirstMatchCaseInsensitively() throws {
        let config = TestSupport.parse(
            """
            upstreams:
              - name: exact
                hosts: [api.example.com]
              - name: wildcard
                hosts: ["*.example.com"]
              - name: fallback
                hosts: ["*"]
            """
        )
        #expect(config?.upstream(forHost: "API.Example.COM")?.name == "exact")
        #expect(config?.upstream(forHost: "www.example.com")?.name == "wildcard")
        #expect(config?.upstream(forHost: "example.com")?.name == "fallback")
        #expect(GatewayConfig().upstream(forHost: "api.example.com") == nil)
    }

    @Test func relativeFilePathsResolveAgainstTheConfigFile() throws {
        let ca = try TestSupport.temporaryFile(named: "ca.pem", contents: "pem")
        defer { TestSupport.removeDirectory(of: ca) }
        let secret = ca.deletingLastPathComponent().appendingPathComponent("password.txt")
        try Data("from-file\n".utf8).write(to: secret)
        let configFile = ca.deletingLastPathComponent().appendingPathComponent("gateway.yaml")
        try Data(
            """
            proxy_auth:
              users:
                - username: dev
                  password_file: password.txt
            upstreams:
              - name: api
                hosts: [api.example.com]
                tls:
                  ca_file: ca.pem
            """.utf8
        ).write(to: configFile)

        let config = try ConfigLoader.load(path: configFile.path, environment: [:])
        #expect(config.upstreams.first?.tls.caFile == ca.standardizedFileURL.path)
        #expect(config.proxyAuth?.users.first?.password.value == "from-file")
        #expect(config.proxyAuth?.users.first?.password.source == .file(secret.standardizedFileURL.path))
    }
}
