import Foundation
import GatewayConfig
import GatewayCore
import GatewayObservability
import GatewayTesting
import NIOConcurrencyHelpers
import Testing

/// A gateway in debug mode with upstream auth, retries and HTTPS interception,
/// and one run of exchanges through it, traced: what the HAR export and the
/// admin page's recent exchanges are tested on.
///
/// - `api`: an intercepted TLS upstream (bearer token, retries); `/custom/flaky` answers 503 once, then sets a cookie;
/// - `echo`: a plain http upstream (API key header).
struct TracedRun {
    static let bearer = Secret(source: .env("HAR_API_TOKEN"), value: "har-bearer-S3cret-0123")
    static let apiKey = Secret(source: .env("HAR_ECHO_KEY"), value: "har-api-key-S3cret-4567")
    static let clientSecret = "client-bearer-S3cret-89ab"
    static let password = "hunter2-S3cret-pass"
    /// The upstream's session cookie (a response header the trace redacts).
    static let sessionCookie = "upstream-session-S3cret"
    /// No byte of a trace, a HAR file or the admin page may hold one of these.
    static let secrets = [bearer.value, apiKey.value, clientSecret, password, sessionCookie]
    static let jsonBody = #"{"user":"me","password":"\#(password)","note":"it's $HOME"}"#
    static let binaryBody = [UInt8](0...255)

    let gateway: GatewayHarness
    let tls: TestUpstream
    let plain: TestUpstream
    let dir: String
    /// Trace records of the run, in order: intercepted GET, retried GET, JSON POST, binary PUT.
    let records: [TraceRecord]

    var traceFile: String { "\(dir)/trace.jsonl" }
    var interceptionCA: String { "\(dir)/state/ca.pem" }

    static func start() async throws -> TracedRun {
        let pki = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-har")
        let paths = try pki.write(to: dir)
        let tls = try await TestUpstream.start(tls: try pki.makeServerContext())
        let plain = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            config.debug = true
            config.trace = TraceConfig(file: "\(dir)/trace.jsonl")
            config.access.connectPorts = [443, tls.port]
            config.interception = InterceptionConfig(stateDir: "\(dir)/state")
            config.upstreams = [
                UpstreamConfig(
                    name: "api", hosts: [HostPattern("localhost")!], ports: [443, tls.port], tls: UpstreamTLSSettings(caFile: paths.caBundle),
                    intercept: true, auth: AuthConfig(kind: .bearer(token: bearer)),
                    retry: RetryConfig(attempts: 3, backoffBase: .milliseconds(5), backoffMax: .milliseconds(20))
                ),
                UpstreamConfig(
                    name: "echo", hosts: [HostPattern("127.0.0.1")!], origin: UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: plain.port),
                    auth: AuthConfig(kind: .header(name: "X-Api-Key", value: apiKey))
                ),
            ]
        }
        let failures = NIOLockedValueBox(0)
        tls.setResponder { _ in
            let n = failures.withLockedValue { $0 += 1; return $0 }
            return n == 1 ? .text("busy\n", status: 503) : .text("ok\n", headers: [("Set-Cookie", "sid=\(sessionCookie)")])
        }
        let run = TracedRun(gateway: gateway, tls: tls, plain: plain, dir: dir, records: [])
        let ca = run.interceptionCA
        let bodyFile = "\(dir)/binary.bin"
        #expect(FileManager.default.createFile(atPath: bodyFile, contents: Data(binaryBody)))
        let requests: [[String]] = [
            ["--cacert", ca, "https://localhost:\(tls.port)/echo?n=1"],
            ["--cacert", ca, "https://localhost:\(tls.port)/custom/flaky"],
            ["-H", "Authorization: Bearer \(clientSecret)", "-H", "Content-Type: application/json", "--data-binary", jsonBody, plain.url("/echo/json?token=\(clientSecret)&q=a%20b")],
            ["-X", "PUT", "-H", "Content-Type: application/octet-stream", "--data-binary", "@\(bodyFile)", plain.url("/echo/binary")],
        ]
        for arguments in requests {
            let result = try await gateway.curl(["-o", "/dev/null"] + arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderrString)")
        }
        let records = try await TraceTests.readRecords(run.traceFile, count: requests.count)
        return TracedRun(gateway: gateway, tls: tls, plain: plain, dir: dir, records: records)
    }

    /// Stops the gateway and the upstreams, and deletes the run's files.
    func stop() async {
        try? await gateway.stop()
        try? await tls.shutdown()
        try? await plain.shutdown()
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Fails the test when `bytes` hold a secret of the run.
    static func expectNoSecret(in bytes: [UInt8], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let text = String(decoding: bytes, as: UTF8.self)
        for secret in secrets {
            #expect(!text.contains(secret), "\(what) holds a secret", sourceLocation: sourceLocation)
        }
    }
}
