import Foundation
import GatewayTesting
import Testing

/// The real binary as an ordinary user: uid 65534, every capability dropped
/// (``Unprivileged``). Every path a client's bytes take (accept, plain http,
/// a blind `CONNECT` tunnel, interception with a minted leaf, HTTP/2 inside
/// it, a WebSocket upgrade) and the readiness probe must work there: a
/// socket option that needed `CAP_NET_ADMIN` once reset every connection for
/// any user but root while every root test passed.
@Suite(.timeLimit(.minutes(3)))
struct UnprivilegedGatewayTests {
    struct Running {
        var gateway: GatewayProcess
        var user: Unprivileged
        var proxyURL: String
        var adminURL: String
        /// The test origins' CA, for the blind tunnel's end-to-end TLS.
        var originCA: String
        var gatewayCA: String { "\(user.directory)/state/ca.pem" }

        /// curl through the gateway (`-x`), silent, never the environment's proxies.
        func curl(_ arguments: [String]) async throws -> ProcessResult {
            try await ProcessRunner.run("curl", ["-sS", "--max-time", "20", "-x", proxyURL] + arguments, environment: ["NO_PROXY": "", "no_proxy": ""])
        }
    }

    /// The gateway as nobody: `localhost` on `tlsPort` intercepted with a bearer
    /// credential, `127.0.0.1` on the same port a blind tunnel.
    func start(tlsPort: Int, certificates: TestCertificates) async throws -> Running {
        let user = try Unprivileged()
        let paths = try certificates.write(to: user.directory)
        let config = """
            listen:
              proxy: 127.0.0.1:0
              admin: 127.0.0.1:0
            state_dir: \(user.directory)/state
            access:
              connect_ports: [\(tlsPort)]
            upstreams:
              - name: api
                hosts: [localhost]
                ports: [\(tlsPort)]
                tls: { ca_file: \(paths.caBundle) }
                intercept: true
                auth: { type: bearer, token_env: API_TOKEN }

            """
        try config.write(toFile: "\(user.directory)/gateway.yaml", atomically: true, encoding: .utf8)
        try user.handOver(user.directory)
        let gateway = try GatewayProcess(
            arguments: ["run", "--config", "\(user.directory)/gateway.yaml"],
            environment: ["API_TOKEN": "nobody-S3cret"], unprivileged: user
        )
        let proxy = try #require(await gateway.listeningPort("proxy"), "\(gateway.log)")
        let admin = try #require(await gateway.listeningPort("admin"), "\(gateway.log)")
        return Running(
            gateway: gateway, user: user, proxyURL: "http://127.0.0.1:\(proxy)", adminURL: "http://127.0.0.1:\(admin)", originCA: paths.caBundle
        )
    }

    @Test func everyClientPathWorksForUid65534WithNoCapability() async throws {
        let certificates = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let plain = try await TestUpstream.start()
        let secure = try await TestUpstream.start(tls: try certificates.makeServerContext())
        let sockets = try await WebSocketTestOrigin.start()
        let running = try await start(tlsPort: secure.port, certificates: certificates)
        defer {
            running.gateway.signal(SIGTERM)
            Task { try? await plain.shutdown(); try? await secure.shutdown(); try? await sockets.shutdown() }
            try? FileManager.default.removeItem(atPath: running.user.directory)
        }

        // It really runs as nobody, with no capability at all.
        let identity = try #require(Unprivileged.identity(of: running.gateway.pid))
        if getuid() == 0 {
            #expect(identity.uid == "65534")
            #expect(identity.effectiveCapabilities == "0000000000000000")
        }

        // Plain http, absolute-form.
        let forwarded = try await running.curl(["-w", "\n%{http_code}", plain.url("/echo?n=1")])
        #expect(forwarded.status == 0 && forwarded.stdoutString.hasSuffix("\n200"), "\(forwarded.stderrString)\n\(running.gateway.log)")

        // A blind CONNECT tunnel (127.0.0.1 is not intercepted): curl checks the origin's own certificate.
        let tunnel = try await running.curl(["--cacert", running.originCA, "-o", "/dev/null", "-w", "%{http_code}", "https://127.0.0.1:\(secure.port)/echo"])
        #expect(tunnel.stdoutString == "200", "\(tunnel.stderrString)\n\(running.gateway.log)")

        // Interception, HTTP/1.1: a leaf minted by the CA the gateway made in its own state folder, and the credential.
        let intercepted = try await running.curl(["--http1.1", "--cacert", running.gatewayCA, "-o", "/dev/null", "-w", "%{http_version} %{http_code}", "https://localhost:\(secure.port)/echo?via=h1"])
        #expect(intercepted.stdoutString == "1.1 200", "\(intercepted.stderrString)\n\(running.gateway.log)")
        // The same host over HTTP/2: a stream of the gateway's own h2 connection.
        let stream = try await running.curl(["--http2", "--cacert", running.gatewayCA, "-o", "/dev/null", "-w", "%{http_version} %{http_code}", "https://localhost:\(secure.port)/echo?via=h2"])
        #expect(stream.stdoutString == "2 200", "\(stream.stderrString)\n\(running.gateway.log)")
        let injected = secure.receivedRequests.filter { $0.target.hasPrefix("/echo?via=") }
        #expect(injected.count == 2)
        #expect(injected.allSatisfy { $0.headers.contains(["authorization", "Bearer nobody-S3cret"]) || $0.headers.contains(["Authorization", "Bearer nobody-S3cret"]) })

        // A WebSocket upgrade, then messages both ways through the tunnel it becomes.
        let socket = try await ProcessRunner.run(
            "python3", ["-c", WebSocketClientScripts.aiohttp],
            environment: ["PROXY": running.proxyURL, "TARGET": "\(sockets.url)/feed", "COUNT": "50", "NO_PROXY": "", "no_proxy": ""],
            timeout: .seconds(60)
        )
        #expect(socket.status == 0, "\(socket.stderrString)\n\(running.gateway.log)")
        #expect(socket.stdoutString.contains(#""echoed": 50"#), "\(socket.stdoutString)")

        // Ready: the admin's probe of the proxy port goes through the same accept path.
        let ready = try await ProcessRunner.run("curl", ["-sS", "-w", "\n%{http_code}", "\(running.adminURL)/readyz"])
        #expect(ready.stdoutString.hasSuffix("\n200"), "\(ready.stdoutString)")
        #expect(!running.gateway.log.contains("could not set up"), "\(running.gateway.log)")
        #expect(!running.gateway.log.contains("nobody-S3cret"))
    }
}
