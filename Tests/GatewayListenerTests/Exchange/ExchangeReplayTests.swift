import GatewayCore
@testable import GatewayListener
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

/// A step that replays the request after a response (the OAuth2 step after a
/// 401), and waits that edit the request: on an `EmbeddedChannel` with a
/// scripted upstream, no socket, no task.
struct ExchangeReplayTests {
    static let get = "GET http://example.test/a HTTP/1.1\r\nHost: example.test\r\n\r\n"

    static func harness(_ steps: [any AttemptStep]) throws -> ClientConnectionHarness {
        let route = UpstreamRoute(observers: [], steps: steps)
        return try ClientConnectionHarness(routes: RouteTable(byUpstream: [:], unconfigured: route))
    }

    @Test func aReplayDiscardsThe401AndSendsOnceMoreAfterItsWait() throws {
        let loop = EmbeddedEventLoop()
        let refreshed = loop.makePromise(of: Void.self)
        let step = ReplayingStep(wait: refreshed.futureResult)
        let harness = try Self.harness([step])
        try harness.send(Self.get)
        harness.answer(status: .unauthorized, body: "expired")
        #expect(try harness.received().isEmpty, "nothing of the 401 reaches the client")
        #expect(harness.transport.attempts.count == 1, "the replay waits for the refresh")
        refreshed.succeed()
        loop.run()
        #expect(harness.transport.attempts.count == 2)
        #expect(step.prepared == 2, "the steps run again for the replay (the new token)")
        #expect(step.offers == [true], "a request without a body may be replayed")
        harness.answer(body: "fine")
        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 200 OK"))
        #expect(response.hasSuffix("fine"))
        #expect(!response.contains("expired"))
    }

    @Test func aRequestIsReplayedOnceAndTheSecond401GoesToTheClient() throws {
        let step = ReplayingStep(wait: nil)
        let harness = try Self.harness([step])
        try harness.send(Self.get)
        harness.answer(status: .unauthorized, body: "expired")
        harness.answer(status: .unauthorized, body: "still")
        #expect(harness.transport.attempts.count == 2)
        #expect(step.offers == [true, false])
        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 401 "))
        #expect(response.hasSuffix("still"))
    }

    @Test func aRequestWithABodyIsNotOfferedAReplay() throws {
        let step = ReplayingStep(wait: nil)
        let harness = try Self.harness([step])
        try harness.send("POST http://example.test/a HTTP/1.1\r\nHost: example.test\r\nContent-Length: 2\r\n\r\nhi")
        harness.answer(status: .unauthorized, body: "no")
        #expect(step.offers == [false])
        #expect(harness.transport.attempts.count == 1)
        #expect(try harness.received().hasPrefix("HTTP/1.1 401 "))
    }

    @Test func aFailedReplayWaitIsTheClientsAnswer() throws {
        let loop = EmbeddedEventLoop()
        let refreshed = loop.makePromise(of: Void.self)
        let harness = try Self.harness([ReplayingStep(wait: refreshed.futureResult)])
        try harness.send(Self.get)
        harness.answer(status: .unauthorized, body: "expired")
        refreshed.fail(GatewayError(.tokenRefreshFailed, "the token endpoint refused", upstream: "example.test:80"))
        loop.run()
        #expect(harness.transport.attempts.count == 1)
        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 401 "), "\(response)")
        #expect(response.lowercased().contains("x-gateway-error: token_refresh_failed"))
    }

    @Test func aWaitThatEditsTheRequestAppliesTheEditBeforeTheNextStep() throws {
        let loop = EmbeddedEventLoop()
        let obtained = loop.makePromise(of: AttemptRequestEdit.self)
        let waiting = RecordingStep(decide: { _ in .wait(AttemptWait(editing: obtained.futureResult, cancel: {})) })
        let harness = try Self.harness([waiting, HeaderStep()])
        try harness.send(Self.get)
        obtained.succeed { $0.headers.replaceOrAdd(name: "Authorization", value: "Bearer fresh") }
        loop.run()
        let sent = try #require(harness.transport.attempts.first?.request)
        #expect(sent.headers.first(name: "Authorization") == "Bearer fresh")
        #expect(sent.headers.first(name: "x-step") == "1")
        #expect(waiting.calls == 1, "an editing wait finishes its step")
    }
}

/// Replays after every 401 it may replay (after `wait`, or at once), and
/// records the offers; asks for a body up to `bodyLimit` bytes to be kept.
final class ReplayingStep: AttemptStep, @unchecked Sendable {
    private let wait: EventLoopFuture<Void>?
    private let bodyLimit: Int?
    private(set) var prepared = 0
    private(set) var offers: [Bool] = []

    init(wait: EventLoopFuture<Void>?, bodyLimit: Int? = nil) {
        self.wait = wait
        self.bodyLimit = bodyLimit
    }

    func replayLimit(for request: ProxyRequest) -> Int? { bodyLimit }

    func prepare(_ request: inout ProxyRequest, context: RequestContext, on eventLoop: any EventLoop) -> AttemptStepDecision {
        prepared += 1
        return .proceed
    }

    func responseHead(_ head: UpstreamResponseHead, of request: ProxyRequest, context: RequestContext, mayReplay: Bool, on eventLoop: any EventLoop) -> AttemptResponseVerdict {
        guard head.status == .unauthorized else { return .accept }
        offers.append(mayReplay)
        guard mayReplay else { return .accept }
        return .replay(AttemptWait(future: wait ?? eventLoop.makeSucceededVoidFuture(), repeatStep: false, cancel: {}))
    }
}
