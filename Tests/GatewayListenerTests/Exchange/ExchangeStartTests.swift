import GatewayConfig
import GatewayCore
@testable import GatewayListener
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

/// The one exchange start both client protocols call, and the exchange it
/// starts, with a recording client: the client only writes what it is given
/// (no observation, no log line, no decision); the exchange observes the
/// response head and finishes its observers. No channel.
struct ExchangeStartTests {
    /// An ``ExchangeClient`` that records the calls it gets, as text.
    final class RecordingClient: ExchangeClient {
        var calls: [String] = []
        var responseStarted = false
        var isWritable = true

        func writeResponseHead(_ head: UpstreamResponseHead, info: ExchangeInfo) -> Bool {
            responseStarted = true
            calls.append("head \(head.status.code)")
            return true
        }
        func writeResponseBodyPart(_ buffer: ByteBuffer) { calls.append("body \(String(buffer: buffer))") }
        func flushResponse() { calls.append("flush") }
        func writeResponseEnd(trailers: HTTPHeaders?) { calls.append("end") }
        func respond(_ response: ProxyResponse, info: ExchangeInfo, addVia: Bool, keepAlive: Bool) -> Int {
            calls.append("respond \(response.status.code)\(addVia ? " via" : "")\(keepAlive ? "" : " close")")
            return 0
        }
        func writeContinue(info: ExchangeInfo) { calls.append("continue") }
        func requestBodyDemand() {}
        func abortResponse() { calls.append("abort") }
        func switchToTunnel(after head: UpstreamResponseHead, tunnel: UpstreamTunnel, info: ExchangeInfo, url: String) {
            calls.append("tunnel \(head.status.code)")
        }
    }

    /// Records what the observers see.
    final class Recorder: ExchangeObserver, @unchecked Sendable {
        final class Observation: ExchangeObservation {
            let recorder: Recorder
            init(_ recorder: Recorder) { self.recorder = recorder }
            func requestBodyPart(_ buffer: ByteBuffer) {}
            func responseHead(status: Int, fields: ResponseFields, via: String?) { recorder.events.append("head \(status) via \(via ?? "-")") }
            func finish(_ outcome: ExchangeOutcome) { recorder.events.append("finish \(outcome.status.map(String.init) ?? "-") \(outcome.error?.rawValue ?? "ok")") }
        }

        var events: [String] = []
        func begin(_ request: ProxyRequest, context: RequestContext) -> any ExchangeObservation { Observation(self) }
    }

    let loop = EmbeddedEventLoop()
    let transport = ScriptedTransport()
    let recorder = Recorder()
    let client = RecordingClient()

    func begin(
        _ uri: String, method: HTTPMethod = .GET, host: String? = nil, origin: InterceptedOrigin? = nil,
        framing: Result<RequestHeadValidator.BodyFraming, GatewayError> = .success(.none)
    ) -> ExchangeStart.Verdict {
        var headers = HTTPHeaders()
        if let host { headers.add(name: "Host", value: host) }
        let head = ClientRequestHead(version: .http1_1, method: method, uri: uri, headers: headers)
        let active = ActiveConfig(
            config: GatewayConfig(), admission: [], routes: RouteTable(byUpstream: [:], unconfigured: UpstreamRoute(observers: [recorder])),
            transport: transport
        )
        let context = RequestContext(id: "t1", clientAddress: "127.0.0.1:1", logger: Logger(label: "test"))
        let info = ExchangeInfo(method: method, version: .http1_1, uri: uri, expectsContinue: false, context: context, observations: [])
        return ExchangeStart.begin(head, framing: framing, origin: origin, mayUpgrade: false, info: info, active: active, client: client, eventLoop: loop)
    }

    /// Runs a started exchange's verdict; fails the test for any other.
    func run(_ verdict: ExchangeStart.Verdict) throws -> Exchange {
        guard case .run(let exchange, let plan) = verdict else {
            Issue.record("expected an exchange, got \(verdict)")
            throw CancellationError()
        }
        exchange.start(plan)
        exchange.requestEnd()
        return exchange
    }

    @Test func anUpstreamsResponseGoesThroughTheClientAndTheExchangeObservesIt() throws {
        let exchange = try run(begin("http://example.test/a"))
        let attempt = try #require(transport.attempts.first)
        attempt.delegate?.upstreamAttemptStarted(attempt.writer)
        attempt.delegate?.upstreamResponseHead(UpstreamResponseHead(status: .ok, headers: ["Content-Length": "2"], declaredLength: 2, hasBody: true))
        attempt.delegate?.upstreamResponseBodyPart(ByteBuffer(string: "ok"))
        attempt.delegate?.upstreamReadComplete()
        attempt.delegate?.upstreamResponseEnd()
        #expect(client.calls == ["head 200", "body ok", "flush", "end"])
        #expect(recorder.events == ["head 200 via \(RequestRouter.responseVia)", "finish 200 ok"])
        #expect(exchange.finished)
    }

    @Test func aFailureBeforeTheHeadIsAnsweredAndObservedByTheExchange() throws {
        _ = try run(begin("http://example.test/a"))
        transport.attempts.first?.delegate?.upstreamAttemptFailed(GatewayError(.connectFailed, "refused"))
        #expect(client.calls == ["respond 502 via close"])
        #expect(recorder.events == ["head 502 via \(RequestRouter.responseVia)", "finish 502 connect_failed"])
    }

    @Test func aFailureMidResponseCutsItShort() throws {
        _ = try run(begin("http://example.test/a"))
        let attempt = try #require(transport.attempts.first)
        attempt.delegate?.upstreamResponseHead(UpstreamResponseHead(status: .ok, headers: [:], declaredLength: nil, hasBody: true))
        attempt.delegate?.upstreamAttemptFailed(GatewayError(.connectionReset, "reset"))
        #expect(client.calls == ["head 200", "flush", "abort"])
        #expect(recorder.events.last == "finish 200 connection_reset")
    }

    @Test func refusalsAnswersAndTunnelsAreTheClientsToWrite() {
        guard case .refuse(let framing) = begin("http://example.test/", framing: .failure(GatewayError(.requestSmuggling, "both"))) else {
            Issue.record("a head the decoder refused is refused")
            return
        }
        #expect(framing.code == .requestSmuggling)
        guard case .refuse(let origin) = begin("/a") else {
            Issue.record("origin form outside interception is refused")
            return
        }
        #expect(origin.code == .unsupportedTarget)
        guard case .answer(let probe, keepAlive: true) = begin("/readyz") else {
            Issue.record("the readiness probe is answered")
            return
        }
        #expect(probe.status == .ok)
        guard case .connect(host: "example.test", port: 443) = begin("example.test:443", method: .CONNECT) else {
            Issue.record("a CONNECT is the client's tunnel")
            return
        }
        #expect(transport.attempts.isEmpty && client.calls.isEmpty && recorder.events.isEmpty)
    }

    @Test func insideInterceptionAnotherHostIs421AndAConnectIsRefused() throws {
        let intercepted = InterceptedOrigin(host: "api.test", port: 443)
        guard case .refuse(let misdirected) = begin("/a", host: "other.test", origin: intercepted) else {
            Issue.record("another host is misdirected")
            return
        }
        #expect(misdirected.status.code == 421)
        guard case .refuse(let connect) = begin("x.test:443", method: .CONNECT, origin: intercepted) else {
            Issue.record("CONNECT inside interception is refused")
            return
        }
        #expect(connect.code == .unsupportedTarget)
        _ = try run(begin("/a", host: "api.test", origin: intercepted))
        #expect(transport.attempts.first?.request.url == "https://api.test/a")
    }
}
