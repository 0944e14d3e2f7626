import Foundation
import GatewayTesting
import Testing

/// Inside an intercepted `CONNECT`, a request whose `:authority` (HTTP/2) or
/// `Host` (HTTP/1.1) names another host than the CONNECT is answered 421
/// `misdirected_request`: it went to the CONNECT host's upstream (with its
/// credential), answered under the other name's certificate.
@Suite(.timeLimit(.minutes(1)))
struct MisdirectedRequestTests {
    let interception = InterceptionTests()

    struct Result: Decodable {
        var status: Int?
        var error: String?
        var after: Int?
    }

    @Test func anHTTP2StreamForAnotherAuthorityIs421AndTheConnectionGoesOn() async throws {
        let f = try await interception.fixture()
        let gateway = try await GatewayHarness.start(interception.configure(f))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }
        let env = f.h2ClientEnvironment(gateway).merging(["OTHER_AUTHORITY": "other.test:\(f.upstream.port)"]) { $1 }
        let run = try await ProcessRunner.run("python3", ["-c", HTTP2ClientScripts.otherAuthorityThenRequest], environment: env, timeout: .seconds(30))
        #expect(run.status == 0, "\(run.stderrString)")
        let result = try JSONDecoder().decode(Result.self, from: Data(run.stdout))
        #expect(result.status == 421 && result.error == "misdirected_request", "\(result)")
        #expect(result.after == 200, "\(result)")
        #expect(!f.upstream.receivedRequests.contains { $0.target.contains("misdirected") }, "nothing went upstream")
    }

    @Test func anHTTP1RequestForAnotherHostIs421AndTheSameHostWithItsPortIsServed() async throws {
        let f = try await interception.fixture()
        let gateway = try await GatewayHarness.start(interception.configure(f))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }
        let other = try await gateway.curl(["--http1.1", "--cacert", f.caPath, "-H", "Host: other.test", "-D", "-", "-o", "/dev/null", "\(f.url)/echo?misdirected=1"])
        #expect(other.stdoutString.contains("HTTP/1.1 421"), "\(other.stdoutString)")
        #expect(other.stdoutString.lowercased().contains("x-gateway-error: misdirected_request"))
        let wrongPort = try await gateway.curl(["--http1.1", "--cacert", f.caPath, "-H", "Host: localhost:1", "-o", "/dev/null", "-w", "%{http_code}", "\(f.url)/echo?misdirected=2"])
        #expect(wrongPort.stdoutString == "421")
        // The CONNECT host, any case, with or without its port: served.
        for host in ["localhost:\(f.upstream.port)", "LOCALHOST", "localhost."] {
            let same = try await gateway.curl(["--http1.1", "--cacert", f.caPath, "-H", "Host: \(host)", "-o", "/dev/null", "-w", "%{http_code}", "\(f.url)/echo?n=1"])
            #expect(same.stdoutString == "200", "\(host): \(same.stdoutString)")
        }
        #expect(!f.upstream.receivedRequests.contains { $0.target.contains("misdirected") })
    }
}
