import NIOCore
import NIOHTTP2
import Testing

@testable import GatewayUpstream

/// One HTTP/2 stream's exchange, without a channel: the request's writes, the
/// response's head (interim ones skipped), body, trailers and end, resets,
/// back-pressure and the request timeout.
@Suite("UpstreamHTTP2StreamStateMachine")
struct UpstreamHTTP2StreamStateMachineTests {
    typealias Machine = UpstreamHTTP2StreamStateMachine

    static let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)

    /// An action as text (actions carry errors, so they are not `Equatable`).
    static func name(_ action: Machine.Action) -> String {
        switch action {
        case .none: return "none"
        case .read: return "read"
        case .forwardHead(let hasBody): return "head(body: \(hasBody))"
        case .forwardBody: return "body"
        case .forwardTrailers: return "trailers"
        case .requestSent: return "sent"
        case .finish(let reset): return "finish(reset: \(reset))"
        case .notOpened: return "notOpened"
        case .fail(.error(_, let beforeHead)): return "fail(error, beforeHead: \(beforeHead))"
        case .fail(.reset(let code, let beforeHead)): return "fail(reset \(code.networkCode), beforeHead: \(beforeHead))"
        case .fail(.closed(let beforeHead)): return "fail(closed, beforeHead: \(beforeHead))"
        case .fail(.timedOut(let beforeHead)): return "fail(timeout, beforeHead: \(beforeHead))"
        case .fail(.protocolViolation): return "fail(protocol)"
        }
    }

    /// A GET whose HEADERS (with END_STREAM) went out.
    static func sentGET(isHEAD: Bool = false) -> Machine {
        var machine = Machine(requestTimeout: .seconds(10), isHEAD: isHEAD)
        machine.start(endQueued: true, now: t0)
        #expect(name(machine.writeSucceeded(isEnd: true, now: t0)) == "sent")
        return machine
    }

    @Test func aResponseWithABodyStreamsToItsEnd() {
        var machine = Self.sentGET()
        #expect(Self.name(machine.responseHead(status: 200, declaredLength: 5, endStream: false, now: Self.t0)) == "head(body: true)")
        #expect(machine.isStreamingResponse)
        #expect(Self.name(machine.responseData(length: 2, now: Self.t0)) == "body")
        #expect(Self.name(machine.responseData(length: 3, now: Self.t0)) == "body")
        #expect(Self.name(machine.responseEnd()) == "finish(reset: false)")
        #expect(machine.isDone)
        #expect(machine.requestWrite(isEnd: true, now: Self.t0) == .refuse(beforeHead: false), "nothing more after the end")
    }

    @Test func interimHeadsAreSkipped() {
        var machine = Self.sentGET()
        #expect(Self.name(machine.responseHead(status: 103, declaredLength: nil, endStream: false, now: Self.t0)) == "none")
        #expect(machine.isAwaitingHead)
        #expect(Self.name(machine.responseHead(status: 200, declaredLength: nil, endStream: false, now: Self.t0)) == "head(body: true)")
        var other = Self.sentGET()
        #expect(Self.name(other.responseHead(status: 101, declaredLength: nil, endStream: false, now: Self.t0)) == "fail(protocol)")
    }

    @Test(arguments: [(false, UInt(204), false), (true, 200, false), (false, 304, false), (false, 200, true)])
    func bodylessResponses(isHEAD: Bool, status: UInt, endStream: Bool) {
        var machine = Self.sentGET(isHEAD: isHEAD)
        let declared: Int? = status == 200 && !isHEAD && !endStream ? 0 : nil
        #expect(Self.name(machine.responseHead(status: status, declaredLength: declared, endStream: endStream, now: Self.t0)) == "head(body: false)")
        // A body a bodyless response should not have is dropped; one its `content-length: 0` denies is malformed.
        #expect(Self.name(machine.responseData(length: 3, now: Self.t0)) == (declared == 0 ? "fail(protocol)" : "none"))
    }

    /// The body is the length its `content-length` says (RFC 9113 §8.1.1): more
    /// DATA, or an end (on DATA, trailers or the head) short of it, is a
    /// malformed response. A HEAD's or a 304's length describes a body not sent.
    @Test func theBodyIsTheLengthItsContentLengthSays() {
        var long = Self.sentGET()
        _ = long.responseHead(status: 200, declaredLength: 5, endStream: false, now: Self.t0)
        #expect(Self.name(long.responseData(length: 3, now: Self.t0)) == "body")
        #expect(Self.name(long.responseData(length: 3, now: Self.t0)) == "fail(protocol)")
        #expect(long.isDone)

        var short = Self.sentGET()
        _ = short.responseHead(status: 200, declaredLength: 5, endStream: false, now: Self.t0)
        #expect(Self.name(short.responseData(length: 4, now: Self.t0)) == "body")
        #expect(Self.name(short.responseEnd()) == "fail(protocol)")

        var shortTrailers = Self.sentGET()
        _ = shortTrailers.responseHead(status: 200, declaredLength: 5, endStream: false, now: Self.t0)
        #expect(Self.name(shortTrailers.responseTrailers(endStream: true)) == "trailers")
        #expect(Self.name(shortTrailers.responseEnd()) == "fail(protocol)")

        var empty = Self.sentGET()
        #expect(Self.name(empty.responseHead(status: 200, declaredLength: 5, endStream: true, now: Self.t0)) == "fail(protocol)")

        for (isHEAD, status) in [(true, UInt(200)), (false, 304)] {
            var bodyless = Self.sentGET(isHEAD: isHEAD)
            #expect(Self.name(bodyless.responseHead(status: status, declaredLength: 5, endStream: true, now: Self.t0)) == "head(body: false)")
            #expect(Self.name(bodyless.responseEnd()) == "finish(reset: false)")
        }
    }

    @Test func trailersEndTheResponse() {
        var machine = Self.sentGET()
        _ = machine.responseHead(status: 200, declaredLength: nil, endStream: false, now: Self.t0)
        #expect(Self.name(machine.responseTrailers(endStream: true)) == "trailers")
        #expect(Self.name(machine.responseEnd()) == "finish(reset: false)")
        var open = Self.sentGET()
        _ = open.responseHead(status: 200, declaredLength: nil, endStream: false, now: Self.t0)
        #expect(Self.name(open.responseTrailers(endStream: false)) == "fail(protocol)")
    }

    /// The server answered before the request body was all sent: the stream is reset.
    @Test func aResponseThatEndsBeforeTheRequestResetsTheStream() {
        var machine = Machine(requestTimeout: .seconds(10), isHEAD: false)
        machine.start(endQueued: false, now: Self.t0)
        _ = machine.writeSucceeded(isEnd: false, now: Self.t0)
        #expect(machine.requestWrite(isEnd: false, now: Self.t0) == .write)
        #expect(Self.name(machine.responseHead(status: 413, declaredLength: 0, endStream: true, now: Self.t0)) == "head(body: false)")
        #expect(Self.name(machine.responseEnd()) == "finish(reset: true)")
    }

    @Test func aResetFailsTheExchange() {
        var refused = Self.sentGET()
        #expect(Self.name(refused.reset(.refusedStream)) == "fail(reset 7, beforeHead: true)")
        #expect(Self.name(refused.responseData(length: 1, now: Self.t0)) == "none", "nothing after the failure")
        var midBody = Self.sentGET()
        _ = midBody.responseHead(status: 200, declaredLength: nil, endStream: false, now: Self.t0)
        #expect(Self.name(midBody.reset(.cancel)) == "fail(reset 8, beforeHead: false)")
        #expect(Self.name(midBody.channelClosed()) == "none")
    }

    @Test func aStreamClosedBeforeItOpenedWasNotOpened() {
        var machine = Machine(requestTimeout: .seconds(10), isHEAD: false)
        #expect(Self.name(machine.channelClosed()) == "notOpened")
        #expect(Self.name(machine.channelClosed()) == "none")
    }

    @Test func readsAreHeldWhileTheConsumerIsPaused() {
        var machine = Self.sentGET()
        #expect(Self.name(machine.readRequested(consumerPaused: true)) == "read", "no pause before the head")
        _ = machine.responseHead(status: 200, declaredLength: nil, endStream: false, now: Self.t0)
        #expect(Self.name(machine.readRequested(consumerPaused: true)) == "none")
        #expect(machine.readHeld)
        #expect(Self.name(machine.consumerDemand(now: Self.t0)) == "read")
        #expect(Self.name(machine.consumerDemand(now: Self.t0)) == "none", "nothing held any more")
        #expect(Self.name(machine.readRequested(consumerPaused: false)) == "read")
    }

    @Test func theTimeoutRunsOnlyWhileTheServerIsWaitedOn() {
        var machine = Self.sentGET()
        #expect(Self.name(machine.timerFired(now: Self.t0 + .seconds(5))) == "none")
        #expect(Self.name(machine.timerFired(now: Self.t0 + .seconds(10))) == "fail(timeout, beforeHead: true)")

        var slowClient = Self.sentGET()
        _ = slowClient.responseHead(status: 200, declaredLength: nil, endStream: false, now: Self.t0)
        _ = slowClient.readRequested(consumerPaused: true)
        #expect(slowClient.timeout.deadline == nil, "waiting on the client is not the server's time")
        #expect(Self.name(slowClient.timerFired(now: Self.t0 + .seconds(60))) == "none")
        _ = slowClient.consumerDemand(now: Self.t0 + .seconds(60))
        #expect(slowClient.timeout.deadline == Self.t0 + .seconds(70))
    }
}
