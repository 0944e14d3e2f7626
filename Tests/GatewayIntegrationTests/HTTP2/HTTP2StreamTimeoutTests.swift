import Foundation
import GatewayConfig
import GatewayTesting
import Testing

/// An HTTP/2 stream has the body and send timeouts an HTTP/1.1 exchange has:
/// a body that never comes is answered 408 after `body_timeout`, a response
/// the client never takes is reset after `send_timeout`, and either way the
/// upstream connection is given back, where 70 such streams held an upstream's
/// whole pool for as long as the client connection stayed open.
@Suite(.timeLimit(.minutes(2)))
struct HTTP2StreamTimeoutTests {
    let interception = InterceptionTests()

    struct Stalled: Decodable {
        var status: Int?
        var error: String?
        var reset: Int?
        var seconds: Double
    }

    func start(_ f: InterceptionTests.Fixture) async throws -> GatewayHarness {
        let configure = interception.configure(f)
        return try await GatewayHarness.start { config in
            configure(&config)
            config.limits.bodyTimeout = .seconds(1)
            config.limits.sendTimeout = .seconds(1)
            config.pool.requestTimeout = .seconds(60)
            config.pool.maxConnectionsPerHost = 1
        }
    }

    func run(_ stall: String, path: String = "/", _ f: InterceptionTests.Fixture, _ gateway: GatewayHarness) async throws -> Stalled {
        let env = f.h2ClientEnvironment(gateway).merging(["STALL": stall, "PATH_STALLED": path]) { $1 }
        let run = try await ProcessRunner.run("python3", ["-c", HTTP2ClientScripts.stalledStream], environment: env, timeout: .seconds(40))
        #expect(run.status == 0, "\(run.stderrString)")
        return try JSONDecoder().decode(Stalled.self, from: Data(run.stdout))
    }

    @Test func aStreamWhoseBodyNeverComesIsAnswered408AndFreesTheUpstream() async throws {
        let f = try await interception.fixture()
        let gateway = try await start(f)
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        let result = try await run("body", f, gateway)
        #expect(result.status == 408 && result.error == "body_timeout", "\(result)")
        #expect(result.seconds < 10, "answered at body_timeout (1 s), not at request_timeout: \(result)")
        // The only upstream connection was given back: another request is served.
        let other = try await gateway.curl(["--cacert", f.caPath, "-o", "/dev/null", "-w", "%{http_code}", "\(f.url)/echo?n=2"])
        #expect(other.stdoutString == "200", "\(other.stderrString)")
    }

    @Test func aStreamWhoseReaderNeverReadsIsResetAndFreesTheUpstream() async throws {
        let f = try await interception.fixture()
        let gateway = try await start(f)
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        let result = try await run("window", path: "/bytes/4000000", f, gateway)
        #expect(result.reset != nil, "the stream was reset: \(result)")
        #expect(result.seconds < 15, "reset at send_timeout (1 s): \(result)")
        #expect(gateway.logs.text.contains("reset stream: send_timeout"), "\(gateway.logs.text)")
        let other = try await gateway.curl(["--cacert", f.caPath, "-o", "/dev/null", "-w", "%{http_code}", "\(f.url)/echo?n=3"])
        #expect(other.stdoutString == "200", "\(other.stderrString)")
    }
}
