import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import NIOConcurrencyHelpers
import Testing

/// WebSockets through the gateway with real clients and a real origin
/// (NIOWebSocket): the handshake is an exchange with the upstream's
/// credential injected, the 101 turns both connections into a tunnel, and a
/// thousand messages each way (text and binary, up to 1 MiB) echo in order.
@Suite(.timeLimit(.minutes(3)))
struct WebSocketTests {
    /// A hand-written RFC 6455 client, absolute-form `http://` target, to an
    /// upstream whose origin is https (TLS originated by the gateway, where a
    /// credential may go): the origin sees the bearer token on the handshake,
    /// the subprotocol comes back, metrics count the 101 and, once closed,
    /// the bytes each way.
    @Test func aRawClientEchoesThroughTheProxyWithTheCredentialInjected() async throws {
        let certificates = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let paths = try certificates.write(to: try TestCertificates.makeTemporaryDirectory())
        let origin = try await WebSocketTestOrigin.start(tls: try certificates.makeServerContext())
        let gateway = try await GatewayHarness.start { config in
            config.upstreams = [UpstreamConfig(
                name: "chat", hosts: [HostPattern("chat.test")!], origin: UpstreamOrigin(scheme: .https, host: "localhost", port: origin.port),
                tls: UpstreamTLSSettings(caFile: paths.caBundle),
                auth: AuthConfig(kind: .bearer(token: Secret(source: .env("CHAT_TOKEN"), value: "ws-secret-token")))
            )]
        }
        defer { Task { try? await gateway.stop(); try? await origin.shutdown() } }

        let result = try await ProcessRunner.run(
            "python3", ["-c", WebSocketClientScripts.raw],
            environment: ["PROXY_PORT": "\(gateway.proxyPort)", "TARGET": "http://chat.test/chat?room=7"],
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.stderrString)")
        #expect(result.stdoutString.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"status": 101, "protocol": "chat", "echoed": 1000}"#)

        let handshake = try #require(origin.handshakes.first)
        #expect(handshake.uri == "/chat?room=7")
        #expect(handshake.headers["authorization"] == ["Bearer ws-secret-token"])
        #expect(handshake.headers["sec-websocket-protocol"] == ["chat, superchat"])
        #expect(handshake.headers["via"] == ["1.1 gateway"])

        // Closed on both sides: the gauge is back to zero and the bytes are counted.
        var metrics = ""
        for _ in 0..<50 {
            metrics = try await ProcessRunner.run("curl", ["-sS", "\(gateway.adminURL)/metrics"]).stdoutString
            if metrics.contains(#"gateway_websockets_open{upstream="chat"} 0"#) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(metrics.contains(#"gateway_websockets_open{upstream="chat"} 0"#))
        #expect(metrics.contains(#"gateway_requests_total{upstream="chat",endpoint="/chat",method="GET",status_class="1xx"} 1"#))
        let toUpstream = try #require(Self.sample(metrics, #"gateway_websocket_bytes_total{upstream="chat",endpoint="/chat",direction="to_upstream"}"#))
        let toClient = try #require(Self.sample(metrics, #"gateway_websocket_bytes_total{upstream="chat",endpoint="/chat",direction="to_client"}"#))
        // Ten 1 MiB messages each way, and framing: masked frames up, bare frames down.
        #expect(toUpstream > Double(10 << 20) && toClient > Double(10 << 20) && toUpstream > toClient)
        #expect(gateway.logs.text.contains("WebSocket https://localhost:\(origin.port)/chat?room= closed"))
        #expect(!gateway.logs.text.contains("ws-secret-token"))
    }

    /// aiohttp sends `GET ws://host/path` to its proxy: read as http. With
    /// debug traces on, the handshake is one record (status 101) whose curl
    /// line carries the upgrade fields.
    @Test func aiohttpWsConnectThroughTheProxy() async throws {
        let origin = try await WebSocketTestOrigin.start()
        let dir = try TraceTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let gateway = try await GatewayHarness.start { config in
            config.debug = true
            config.trace = TraceConfig(file: "\(dir)/trace.jsonl")
        }
        defer { Task { try? await gateway.stop(); try? await origin.shutdown() } }

        let result = try await ProcessRunner.run(
            "python3", ["-c", WebSocketClientScripts.aiohttp],
            environment: ["PROXY": gateway.proxyURL, "TARGET": "\(origin.url)/feed", "NO_PROXY": "", "no_proxy": ""],
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.stderrString)")
        #expect(result.stdoutString.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"echoed": 1000, "close_code": 1000}"#)
        #expect(origin.handshakes.first?.uri == "/feed")
        let record = try #require(try await TraceTests.readRecords("\(dir)/trace.jsonl", count: 1).first)
        #expect(record.status == 101 && record.method == "GET")
        #expect(record.curl.contains("Upgrade: websocket") && record.curl.contains("Connection: Upgrade"), "\(record.curl)")
    }

    /// `wss://` to an intercepted host, with the `websockets` library's proxy
    /// support and the gateway's CA: the handshake inside the interception gets
    /// the credential, and the messages go through both TLS sessions.
    @Test func websocketsLibraryToAnInterceptedHost() async throws {
        let certificates = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let dir = try TestCertificates.makeTemporaryDirectory()
        let paths = try certificates.write(to: dir)
        let origin = try await WebSocketTestOrigin.start(tls: try certificates.makeServerContext())
        let gateway = try await GatewayHarness.start { config in
            config.access.connectPorts = [origin.port]
            config.interception = InterceptionConfig(stateDir: "\(dir)/state")
            config.upstreams = [UpstreamConfig(
                name: "live", hosts: [HostPattern("localhost")!], ports: [origin.port], tls: UpstreamTLSSettings(caFile: paths.caBundle),
                intercept: true, auth: AuthConfig(kind: .bearer(token: Secret(source: .env("LIVE_TOKEN"), value: "wss-intercepted-token")))
            )]
        }
        defer { Task { try? await gateway.stop(); try? await origin.shutdown() } }

        let result = try await ProcessRunner.run(
            "python3", ["-c", WebSocketClientScripts.websockets],
            environment: [
                "PROXY": gateway.proxyURL, "TARGET": "wss://localhost:\(origin.port)/live", "CA": "\(dir)/state/ca.pem",
                "NO_PROXY": "", "no_proxy": "",
            ],
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.stderrString)")
        #expect(result.stdoutString.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"echoed": 1000}"#)
        let handshake = try #require(origin.handshakes.first)
        #expect(handshake.headers["authorization"] == ["Bearer wss-intercepted-token"])
        #expect(handshake.headers["x-client"] == ["websockets"])
    }

    /// A handshake the origin refuses is a normal response for the client
    /// (and the connection closes after it: nothing after an upgrade request is parsed).
    @Test func aRefusedHandshakeIsANormalResponse() async throws {
        let origin = try await WebSocketTestOrigin.start(refuse: .forbidden)
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await origin.shutdown() } }

        let result = try await ProcessRunner.run(
            "python3", ["-c", WebSocketClientScripts.raw],
            environment: ["PROXY_PORT": "\(gateway.proxyPort)", "TARGET": "http://127.0.0.1:\(origin.port)/chat"]
        )
        #expect(result.status == 0, "\(result.stderrString)")
        #expect(result.stdoutString.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"status": 403, "connection": "close"}"#)
        #expect(origin.handshakes.count == 1)
    }

    /// An OAuth2 upstream that stops accepting the gateway's token: the
    /// handshake's 401 refreshes the token once and the handshake goes again
    /// with the new one, as a GET would; the client only sees the 101.
    @Test func aHandshakeAnswered401RefreshesTheTokenAndGoesAgain() async throws {
        let f = try await OAuthTests.Fixture.start()
        let authority = f.authority
        // The first handshake finds its token revoked (the authority stopped accepting it).
        let revoked = NIOLockedValueBox(false)
        let origin = try await WebSocketTestOrigin.start { head in
            let first = revoked.withLockedValue { done in
                defer { done = true }
                return !done
            }
            if first { authority.revokeAccessTokens() }
            let token = head.headers["authorization"].first.map { String($0.dropFirst("Bearer ".count)) } ?? ""
            return authority.isValid(accessToken: token) ? nil : .unauthorized
        }
        let gateway = try await GatewayHarness.start { config in
            f.configure(&config)
            config.upstreams[1].origin = UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: origin.port)
        }
        defer { Task { try? await gateway.stop(); try? await origin.shutdown(); await f.shutdown() } }

        let result = try await ProcessRunner.run(
            "python3", ["-c", WebSocketClientScripts.raw],
            environment: ["PROXY_PORT": "\(gateway.proxyPort)", "TARGET": "http://api.payments.test/stream", "COUNT": "20"]
        )
        #expect(result.status == 0, "\(result.stderrString)")
        #expect(result.stdoutString.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"status": 101, "protocol": "chat", "echoed": 20}"#)
        #expect(authority.tokenCallCount == 2, "the first token, and one refresh after the 401")
        let tokens = origin.handshakes.map { $0.headers["authorization"].first ?? "" }
        #expect(tokens.count == 2 && tokens[0] != tokens[1], "\(tokens.count) handshakes")
        for secret in f.secrets { #expect(!gateway.logs.text.contains(secret)) }
    }

    /// The value of one sample line of a Prometheus exposition.
    static func sample(_ exposition: String, _ series: String) -> Double? {
        for line in exposition.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }
}
