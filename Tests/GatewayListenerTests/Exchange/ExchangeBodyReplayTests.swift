import GatewayCore
@testable import GatewayListener
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

/// A request body sent more than once on the event loop: the first attempt
/// streams it and the exchange keeps a copy, which a retry or a step's replay
/// sends again, once the client's whole body is in. On an `EmbeddedChannel`
/// with a scripted upstream and the embedded loop's clock: no socket, no sleep.
struct ExchangeBodyReplayTests {
    static func harness(steps: [any AttemptStep] = [], retry: (any RetryPlanner)? = nil) throws -> ClientConnectionHarness {
        let route = UpstreamRoute(observers: [], steps: steps, retry: retry)
        return try ClientConnectionHarness(routes: RouteTable(byUpstream: [:], unconfigured: route))
    }

    static func post(_ headers: String) -> String {
        "POST http://example.test/a HTTP/1.1\r\nHost: example.test\r\nIdempotency-Key: k1\r\n\(headers)\r\n"
    }

    /// The attempt in flight fails before its response head (a timeout the planner retries).
    static func failAttempt(_ harness: ClientConnectionHarness) {
        harness.transport.attempts.last?.delegate?.upstreamAttemptFailed(GatewayError(.requestTimeout, "no answer", upstream: "example.test:80"))
    }

    /// The body an attempt carried in its request (a later attempt's whole copy), as text.
    static func carried(_ attempt: ScriptedTransport.Attempt) -> String? {
        guard case .bytes(let buffer) = attempt.request.body.storage else { return nil }
        return String(buffer: buffer)
    }

    @Test func aRetrySendsTheSameBodyAgainInOneWrite() throws {
        let harness = try Self.harness(retry: ScriptedRetryPlanner(statusDelay: .milliseconds(10), bodyLimit: 100))
        try harness.send(Self.post("Content-Length: 5\r\n") + "hello")
        harness.answer(status: .serviceUnavailable, body: "busy")
        let first = try #require(harness.transport.attempts.first)
        #expect(first.writer.body == "hello" && first.writer.ended, "the first attempt streams the body")
        harness.channel.embeddedEventLoop.advanceTime(by: .milliseconds(10))
        #expect(harness.transport.attempts.count == 2)
        let second = try #require(harness.transport.attempts.last)
        #expect(Self.carried(second) == "hello", "byte for byte, with the request")
        #expect(second.request.body.declaredLength == 5)
        harness.answer(body: "done")
        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 200 OK"), "\(response)")
        #expect(!response.contains("busy"))
        #expect(second.writer.body.isEmpty, "nothing more is streamed to a later attempt")
    }

    @Test func aRetryDecidedBeforeTheBodyIsInWaitsForTheRest() throws {
        let harness = try Self.harness(retry: ScriptedRetryPlanner(bodyLimit: 100))
        try harness.send(Self.post("Content-Length: 10\r\n") + "hello")
        Self.failAttempt(harness)
        #expect(harness.transport.attempts.count == 1, "the retry waits for the client's whole body")
        try harness.send("world")
        #expect(harness.transport.attempts.count == 2)
        #expect(Self.carried(harness.transport.attempts[1]) == "helloworld")
        harness.answer(body: "ok")
        #expect(try harness.received().hasPrefix("HTTP/1.1 200 OK"))
    }

    @Test func aSlowClientBodyDoesNotCountAgainstPerTryTimeout() throws {
        let harness = try Self.harness(retry: ScriptedRetryPlanner(perTryTimeout: .seconds(1), bodyLimit: 100))
        try harness.send(Self.post("Content-Length: 10\r\n") + "hello")
        let first = try #require(harness.transport.attempts.first)
        first.delegate?.upstreamAttemptStarted(first.writer)
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        #expect(harness.transport.attempts.count == 1, "the attempt's clock waits for the client's whole body")
        try harness.send("world")
        #expect(first.writer.body == "helloworld" && first.writer.ended)
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(harness.transport.attempts.count == 2, "then per_try_timeout runs")
        #expect(Self.carried(harness.transport.attempts[1]) == "helloworld")
    }

    @Test func aResponseBeforeTheWholeBodyWentGivesTheAttemptUp() throws {
        let harness = try Self.harness(retry: ScriptedRetryPlanner(bodyLimit: 100))
        try harness.send(Self.post("Content-Length: 10\r\n") + "hello")
        harness.answer(status: .serviceUnavailable, body: "early")
        let first = try #require(harness.transport.attempts.first)
        #expect(first.writer.aborted, "its connection is not reused: the rest of the body would follow")
        #expect(harness.transport.attempts.count == 1)
        try harness.send("world")
        #expect(Self.carried(harness.transport.attempts[1]) == "helloworld")
        #expect(first.writer.body == "hello", "the rest went to the copy only")
        harness.answer(body: "ok")
        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 200 OK") && !response.contains("early"))
    }

    @Test func aBodyOverTheRetryLimitIsSentOnceAndItsAnswerGoesBack() throws {
        let chunked = try Self.harness(retry: ScriptedRetryPlanner(bodyLimit: 4))
        try chunked.send(Self.post("Transfer-Encoding: chunked\r\n") + "5\r\nhello\r\n0\r\n\r\n")
        chunked.answer(status: .serviceUnavailable, body: "busy")
        #expect(chunked.transport.attempts.count == 1)
        #expect(chunked.transport.attempts[0].writer.body == "hello")
        #expect(try chunked.received().hasPrefix("HTTP/1.1 503 "))

        let declared = try Self.harness(retry: ScriptedRetryPlanner(bodyLimit: 4))
        try declared.send(Self.post("Content-Length: 5\r\n") + "hello")
        declared.answer(status: .serviceUnavailable, body: "busy")
        #expect(declared.transport.attempts.count == 1)
        #expect(try declared.received().hasPrefix("HTTP/1.1 503 "))
    }

    @Test func aChunkedBodyOutgrowingTheLimitWhileARetryWaitsGivesTheFailureBack() throws {
        let planner = ScriptedRetryPlanner(bodyLimit: 4)
        let harness = try Self.harness(retry: planner)
        try harness.send(Self.post("Transfer-Encoding: chunked\r\n") + "3\r\nabc\r\n")
        Self.failAttempt(harness)
        #expect(try harness.received().isEmpty, "the retry may still go: it waits for the body")
        try harness.send("3\r\ndef\r\n")
        #expect(harness.transport.attempts.count == 1)
        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 504 "), "\(response)")
        #expect(response.lowercased().contains("x-gateway-error: request_timeout"))
        #expect(planner.asks.value == 0, "a retry that could not go was not taken from the budget, nor counted")
    }

    @Test func aRetryAfterAFailureDuringAChunkedBodyIsDecidedOnceTheBodyIsIn() throws {
        let planner = ScriptedRetryPlanner(bodyLimit: 100)
        let harness = try Self.harness(retry: planner)
        try harness.send(Self.post("Transfer-Encoding: chunked\r\n") + "5\r\nhello\r\n")
        Self.failAttempt(harness)
        #expect(planner.asks.value == 0, "the body may still outgrow its copy")
        #expect(harness.transport.attempts.count == 1)
        try harness.send("0\r\n\r\n")
        #expect(planner.asks.value == 1)
        #expect(harness.transport.attempts.count == 2)
        #expect(Self.carried(harness.transport.attempts[1]) == "hello")
        harness.answer(body: "ok")
        #expect(try harness.received().hasPrefix("HTTP/1.1 200 OK"))
    }

    @Test func aClientAwaiting100ContinueGetsItWhenTheRetryWaitsForTheBody() throws {
        let harness = try Self.harness(retry: ScriptedRetryPlanner(bodyLimit: 100))
        try harness.send(Self.post("Content-Length: 5\r\nExpect: 100-continue\r\n"))
        #expect(try harness.received().isEmpty, "the first attempt never started")
        Self.failAttempt(harness)
        #expect(try harness.received().hasPrefix("HTTP/1.1 100 Continue"))
        try harness.send("hello")
        #expect(Self.carried(harness.transport.attempts[1]) == "hello")
        harness.answer(body: "ok")
        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 200 OK") && !response.contains("100 Continue"), "100 Continue goes once")
    }

    @Test func a401IsReplayedWithTheBodyWithinTheStepsLimit() throws {
        let step = ReplayingStep(wait: nil, bodyLimit: 100)
        let harness = try Self.harness(steps: [step])
        try harness.send(Self.post("Content-Length: 5\r\n") + "hello")
        harness.answer(status: .unauthorized, body: "expired")
        #expect(step.offers == [true])
        #expect(harness.transport.attempts.count == 2)
        #expect(Self.carried(harness.transport.attempts[1]) == "hello")
        #expect(step.prepared == 2)
        harness.answer(body: "fine")
        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 200 OK") && response.hasSuffix("fine"))
    }

    @Test func a401IsNotReplayedWhenTheChunkedBodyMayNotFit() throws {
        let step = ReplayingStep(wait: nil, bodyLimit: 100)
        let harness = try Self.harness(steps: [step])
        try harness.send(Self.post("Transfer-Encoding: chunked\r\n") + "5\r\nhello\r\n")
        harness.answer(status: .unauthorized, body: "no")
        #expect(step.offers == [false], "not all in yet, of unknown length: the 401 goes back")
        #expect(harness.transport.attempts.count == 1)
        #expect(try harness.received().hasPrefix("HTTP/1.1 401 "))
    }
}
