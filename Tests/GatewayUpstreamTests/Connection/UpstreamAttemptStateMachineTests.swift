import NIOCore
import NIOHTTP1
import Testing

@testable import GatewayUpstream

/// The upstream attempt state machine as pure values: every state, keep-alive
/// and close, HEAD, early responses, failures, the request timeout's clock, and
/// the events a peer or a late callback can cause at the wrong time.
struct UpstreamAttemptStateMachineTests {
    typealias Machine = UpstreamAttemptStateMachine

    // MARK: Normal attempts

    @Test func aKeepAliveExchangeReturnsTheConnectionToIdle() {
        var machine = Machine(requestTimeout: .seconds(5))
        #expect(machine.state == .idle)
        let id = machine.startGET(at: 0)
        #expect(id == 1)
        #expect(machine.attempt?.request == .endQueued)
        #expect(machine.attempt?.outstandingWrites == 1)
        #expect(machine.timeout.isArmed)

        #expect(machine.writeSucceeded(attemptID: id, isEnd: true, now: .at(1)).seen == .requestSent)
        #expect(machine.attempt?.request == .sent)
        #expect(machine.timeout.isArmed)

        #expect(machine.responseHead(.ok(length: 5), untilClose: false, now: .at(2)).seen == .head(status: 200, length: 5, hasBody: true))
        #expect(machine.attempt?.response == .streaming(keepAlive: true))
        #expect(machine.isStreamingResponse)
        #expect(machine.responseBodyPart(ByteBuffer(string: "hello"), now: .at(3)).seen == .body(5))
        #expect(machine.responseEnd(bytesFollow: false).seen == .end(.reuse(resumeRead: false)))
        #expect(machine.state == .idle)
        #expect(!machine.timeout.isArmed)
    }

    @Test func attemptsOnOneConnectionGetNewIDs() {
        var machine = Machine(requestTimeout: .seconds(5))
        for expected in 1...3 {
            let id = machine.startGET(at: 0)
            #expect(id == expected)
            _ = machine.writeSucceeded(attemptID: id, isEnd: true, now: .at(0))
            _ = machine.responseHead(.ok(length: 0), untilClose: false, now: .at(0))
            #expect(machine.responseEnd(bytesFollow: false).seen == .end(.reuse(resumeRead: false)))
        }
    }

    @Test func aResponseAskingToCloseClosesTheConnection() {
        var machine = Machine(requestTimeout: .seconds(5))
        let id = machine.startGET(at: 0)
        _ = machine.writeSucceeded(attemptID: id, isEnd: true, now: .at(0))
        let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "2", "Connection": "close"])
        _ = machine.responseHead(head, untilClose: false, now: .at(0))
        #expect(machine.attempt?.response == .streaming(keepAlive: false))
        #expect(machine.responseEnd(bytesFollow: false).seen == .end(.close))
        #expect(machine.isClosed)
        #expect(machine.startAttempt(isHEAD: false, keepAlive: true, endQueued: true, now: .at(1)) == .refuseClosed)
    }

    @Test func aBodyReadUntilCloseNeverReturnsTheConnection() {
        var machine = Machine(requestTimeout: .seconds(5))
        let id = machine.startGET(at: 0)
        _ = machine.writeSucceeded(attemptID: id, isEnd: true, now: .at(0))
        // A keep-alive head whose body has no length: only the close can end it.
        let head = HTTPResponseHead(version: .http1_1, status: .ok)
        #expect(machine.responseHead(head, untilClose: true, now: .at(0)).seen == .head(status: 200, length: nil, hasBody: true))
        #expect(machine.attempt?.response == .streaming(keepAlive: false))
        #expect(machine.responseEnd(bytesFollow: false).seen == .end(.close))
        #expect(machine.isClosed)
    }

    @Test func bytesAfterACompleteResponseCloseTheConnection() {
        var machine = Machine(requestTimeout: .seconds(5))
        let id = machine.startGET(at: 0)
        _ = machine.writeSucceeded(attemptID: id, isEnd: true, now: .at(0))
        _ = machine.responseHead(.ok(length: 0), untilClose: false, now: .at(0))
        // The response itself is whole: it ends normally, but nothing more is sent on it.
        #expect(machine.responseEnd(bytesFollow: true).seen == .end(.close))
        #expect(machine.isClosed)
    }

    @Test func aRequestAskingToCloseClosesTheConnection() {
        var machine = Machine(requestTimeout: .seconds(5))
        guard case .start(let id) = machine.startAttempt(isHEAD: false, keepAlive: false, endQueued: true, now: .at(0)) else {
            Issue.record("not started")
            return
        }
        _ = machine.writeSucceeded(attemptID: id, isEnd: true, now: .at(0))
        _ = machine.responseHead(.ok(length: 0), untilClose: false, now: .at(0))
        #expect(machine.responseEnd(bytesFollow: false).seen == .end(.close))
    }

    @Test func bodylessResponsesSayNoBodyFollows() {
        var head = Machine(requestTimeout: .seconds(5))
        guard case .start = head.startAttempt(isHEAD: true, keepAlive: true, endQueued: true, now: .at(0)) else {
            Issue.record("not started")
            return
        }
        #expect(head.responseHead(.ok(length: 100), untilClose: false, now: .at(0)).seen == .head(status: 200, length: 100, hasBody: false))

        let cases: [(HTTPResponseStatus, Int?, Bool)] = [(.noContent, nil, false), (.notModified, nil, false), (.ok, 0, false), (.ok, nil, true)]
        for (status, length, hasBody) in cases {
            var machine = Machine(requestTimeout: .seconds(5))
            _ = machine.startGET(at: 0)
            let response = HTTPResponseHead(version: .http1_1, status: status, headers: length.map { ["Content-Length": "\($0)"] } ?? [:])
            #expect(machine.responseHead(response, untilClose: false, now: .at(0)).seen == .head(status: status.code, length: length, hasBody: hasBody))
        }
    }

    // MARK: Streamed request bodies

    @Test func aStreamedBodyIsTimedOnlyWhileItsWritesAreOutstanding() {
        var machine = Machine(requestTimeout: .seconds(5))
        let id = machine.startStreamed(at: 0)
        #expect(machine.attempt?.request == .streaming)
        // Waiting on the client for the body: not the upstream's time.
        #expect(!machine.timeout.isArmed)

        #expect(machine.requestWrite(attemptID: id, isEnd: false, now: .at(1)) == .write)
        #expect(machine.timeout.deadline == .at(6))
        #expect(machine.writeSucceeded(attemptID: id, isEnd: false, now: .at(2)).seen == Seen.none)
        #expect(!machine.timeout.isArmed)

        #expect(machine.requestWrite(attemptID: id, isEnd: true, now: .at(3)) == .write)
        #expect(machine.attempt?.request == .endQueued)
        // Nothing may follow the end.
        #expect(machine.requestWrite(attemptID: id, isEnd: false, now: .at(3)) == .refuse(beforeHead: true))
        #expect(machine.writeSucceeded(attemptID: id, isEnd: true, now: .at(4)).seen == .requestSent)
        // Now waiting for the head, from the last progress.
        #expect(machine.timeout.deadline == .at(9))
    }

    @Test func aResponseBeforeTheRequestBodyEndedClosesTheConnection() {
        var machine = Machine(requestTimeout: .seconds(5))
        let id = machine.startStreamed(at: 0)
        #expect(machine.responseHead(.ok(length: 2), untilClose: false, now: .at(1)).seen == .head(status: 200, length: 2, hasBody: true))
        // The response streams from the upstream: timed.
        #expect(machine.timeout.deadline == .at(6))
        #expect(machine.responseEnd(bytesFollow: false).seen == .end(.close))
        #expect(machine.isClosed)
        // The delegate's writer learns the attempt is over.
        #expect(machine.requestWrite(attemptID: id, isEnd: true, now: .at(2)) == .refuse(beforeHead: true))
    }

    @Test func aFailedWriteFailsTheAttempt() {
        var machine = Machine(requestTimeout: .seconds(5))
        let id = machine.startGET(at: 0)
        #expect(machine.writeFailed(attemptID: id, error: ChannelError.ioOnClosedChannel).seen == .failed(.error))
        #expect(machine.isClosed)
    }

    // MARK: Failures

    @Test func anErrorMidBodyFailsTheExchangeOnce() {
        var machine = Machine(requestTimeout: .seconds(5))
        let id = machine.startGET(at: 0)
        _ = machine.writeSucceeded(attemptID: id, isEnd: true, now: .at(0))
        _ = machine.responseHead(.ok(length: 10), untilClose: false, now: .at(0))
        _ = machine.responseBodyPart(ByteBuffer(string: "abc"), now: .at(0))
        #expect(machine.errorCaught(ChannelError.eof).seen == .failed(.error))
        #expect(machine.isClosed)
        #expect(!machine.timeout.isArmed)
        // What follows the failure finds nothing to fail.
        #expect(machine.channelClosed().seen == Seen.none)
        #expect(machine.errorCaught(ChannelError.eof).seen == Seen.none)
        #expect(machine.responseBodyPart(ByteBuffer(string: "d"), now: .at(0)).seen == Seen.none)
        #expect(machine.responseEnd(bytesFollow: false).seen == Seen.none)
        #expect(machine.abort(attemptID: id, error: ChannelError.eof).seen == Seen.none)
    }

    @Test func theChannelClosingFailsTheExchangeBeforeOrAfterTheHead() {
        var beforeHead = Machine(requestTimeout: .seconds(5))
        _ = beforeHead.startGET(at: 0)
        #expect(beforeHead.channelClosed().seen == .failed(.closed(beforeHead: true)))

        var midBody = Machine(requestTimeout: .seconds(5))
        _ = midBody.startGET(at: 0)
        _ = midBody.responseHead(.ok(length: 10), untilClose: false, now: .at(0))
        #expect(midBody.channelClosed().seen == .failed(.closed(beforeHead: false)))
    }

    @Test func anAbortFailsOnlyItsOwnAttempt() {
        var machine = Machine(requestTimeout: .seconds(5))
        let first = machine.startGET(at: 0)
        _ = machine.writeSucceeded(attemptID: first, isEnd: true, now: .at(0))
        _ = machine.responseHead(.ok(length: 0), untilClose: false, now: .at(0))
        _ = machine.responseEnd(bytesFollow: false)
        let second = machine.startGET(at: 0)
        #expect(machine.abort(attemptID: first, error: CancellationError()).seen == Seen.none)
        #expect(machine.abort(attemptID: second, error: CancellationError()).seen == .failed(.error))
    }

    // MARK: Idle and closed connections

    @Test func closingWhileIdleStopsTheTimerAndRefusesLeases() {
        var machine = Machine(requestTimeout: .seconds(5))
        #expect(machine.releaseUnused().seen == .release(true))
        #expect(machine.channelClosed().seen == .stopTimer)
        #expect(machine.isClosed)
        #expect(machine.startAttempt(isHEAD: false, keepAlive: true, endQueued: true, now: .at(0)) == .refuseClosed)
        #expect(machine.releaseUnused().seen == .release(false))
        #expect(machine.channelClosed().seen == Seen.none)
    }

    @Test func anErrorWhileIdleClosesTheConnection() {
        var machine = Machine(requestTimeout: .seconds(5))
        #expect(machine.errorCaught(ChannelError.eof).seen == .close)
        #expect(machine.isClosed)
    }

    // MARK: Request timeout

    @Test func theTimeoutCountsFromTheLastProgress() {
        var machine = Machine(requestTimeout: .seconds(5))
        let id = machine.startGET(at: 0)
        _ = machine.writeSucceeded(attemptID: id, isEnd: true, now: .at(1))
        #expect(machine.timeout.deadline == .at(6))
        // The task scheduled at the start fires early: not run out, rescheduled for the deadline.
        #expect(machine.timerFired(now: .at(5)).seen == Seen.none)
        #expect(machine.timeout.deadline == .at(6))
        _ = machine.responseHead(.ok(length: 10), untilClose: false, now: .at(4))
        _ = machine.responseBodyPart(ByteBuffer(string: "a"), now: .at(8))
        #expect(machine.timerFired(now: .at(12)).seen == Seen.none)
        #expect(machine.timerFired(now: .at(13)).seen == .failed(.timedOut(beforeHead: false)))
        #expect(machine.isClosed)
    }

    @Test func noAnswerWithinTheTimeoutFailsBeforeTheHead() {
        var machine = Machine(requestTimeout: .seconds(5))
        let id = machine.startGET(at: 0)
        _ = machine.writeSucceeded(attemptID: id, isEnd: true, now: .at(0))
        #expect(machine.timerFired(now: .at(5)).seen == .failed(.timedOut(beforeHead: true)))
    }

    @Test func aReusedConnectionArmsTheTimeoutAgainFromTheNextStart() {
        var machine = Machine(requestTimeout: .seconds(5))
        let first = machine.startGET(at: 0)
        _ = machine.writeSucceeded(attemptID: first, isEnd: true, now: .at(0))
        _ = machine.responseHead(.ok(length: 0), untilClose: false, now: .at(0))
        _ = machine.responseEnd(bytesFollow: false)
        #expect(machine.timeout.deadline == nil)
        // The task still pending from the first attempt fires: nothing to time.
        #expect(machine.timerFired(now: .at(1)).seen == Seen.none)
        _ = machine.startGET(at: 3)
        #expect(machine.timeout.deadline == .at(8))
        #expect(machine.timerFired(now: .at(5)).seen == Seen.none)
        #expect(machine.timerFired(now: .at(8)).seen == .failed(.timedOut(beforeHead: true)))
    }

    // MARK: Back-pressure

    @Test func aHeldReadStopsTheClockUntilDemand() {
        var machine = Machine(requestTimeout: .seconds(5))
        let id = machine.startGET(at: 0)
        _ = machine.writeSucceeded(attemptID: id, isEnd: true, now: .at(0))
        // Before the head the delegate is not asked: reads go on.
        #expect(machine.readRequested(consumerPaused: true).seen == .read)
        _ = machine.responseHead(.ok(length: 10), untilClose: false, now: .at(0))
        #expect(machine.readRequested(consumerPaused: false).seen == .read)
        #expect(machine.readRequested(consumerPaused: true).seen == Seen.none)
        #expect(machine.readHeld)
        #expect(!machine.timeout.isArmed)
        #expect(machine.timerFired(now: .at(60)).seen == Seen.none)
        // Demand from another attempt's writer does nothing.
        #expect(machine.consumerDemand(attemptID: id + 1, now: .at(60)).seen == Seen.none)
        #expect(machine.consumerDemand(attemptID: id, now: .at(60)).seen == .read)
        #expect(!machine.readHeld)
        #expect(machine.timeout.deadline == .at(65))
        #expect(machine.consumerDemand(attemptID: id, now: .at(61)).seen == Seen.none)
    }

    @Test func aReadHeldAtTheEndGoesOutWithTheRelease() {
        var machine = Machine(requestTimeout: .seconds(5))
        let id = machine.startGET(at: 0)
        _ = machine.writeSucceeded(attemptID: id, isEnd: true, now: .at(0))
        _ = machine.responseHead(.ok(length: 1), untilClose: false, now: .at(0))
        _ = machine.readRequested(consumerPaused: true)
        // The end was decoded from bytes already read.
        #expect(machine.responseEnd(bytesFollow: false).seen == .end(.reuse(resumeRead: true)))
        #expect(!machine.readHeld)
    }

    // MARK: Events at the wrong time

    @Test func responsePartsNobodyAskedForCloseAnIdleConnection() {
        var head = Machine(requestTimeout: .seconds(5))
        #expect(head.responseHead(.ok(length: 0), untilClose: false, now: .at(0)).seen == .close)
        #expect(head.isClosed)
        // A part after the close is dropped.
        #expect(head.responseEnd(bytesFollow: false).seen == Seen.none)

        var body = Machine(requestTimeout: .seconds(5))
        #expect(body.responseBodyPart(ByteBuffer(string: "x"), now: .at(0)).seen == .close)
        var end = Machine(requestTimeout: .seconds(5))
        #expect(end.responseEnd(bytesFollow: false).seen == .close)
    }

    @Test func malformedResponsesFailTheAttempt() {
        var second = Machine(requestTimeout: .seconds(5))
        _ = second.startGET(at: 0)
        _ = second.responseHead(.ok(length: 1), untilClose: false, now: .at(0))
        #expect(second.responseHead(.ok(length: 1), untilClose: false, now: .at(0)).seen == .failed(.violation(.secondHead)))

        var upgrade = Machine(requestTimeout: .seconds(5))
        _ = upgrade.startGET(at: 0)
        let switching = HTTPResponseHead(version: .http1_1, status: .switchingProtocols)
        #expect(upgrade.responseHead(switching, untilClose: false, now: .at(0)).seen == .failed(.violation(.informational(101))))

        var body = Machine(requestTimeout: .seconds(5))
        _ = body.startGET(at: 0)
        #expect(body.responseBodyPart(ByteBuffer(string: "x"), now: .at(0)).seen == .failed(.violation(.bodyBeforeHead)))

        var end = Machine(requestTimeout: .seconds(5))
        _ = end.startGET(at: 0)
        #expect(end.responseEnd(bytesFollow: false).seen == .failed(.violation(.endBeforeHead)))
    }

    /// A handshake's 101 ends the attempt in the hand-over; nothing after it
    /// is the machine's (no close, no release), and no attempt starts on it again.
    @Test func aHandshakesSwitchingProtocolsIsAnUpgrade() {
        var machine = Machine(requestTimeout: .seconds(5))
        let upgrade = WebSocketUpgrade(requestKey: "dGhlIHNhbXBsZSBub25jZQ==")
        guard case .start = machine.startAttempt(isHEAD: false, keepAlive: false, upgrade: upgrade, endQueued: true, now: .at(0)) else {
            Issue.record("the handshake did not start")
            return
        }
        let switching = HTTPResponseHead(version: .http1_1, status: .switchingProtocols, headers: [
            "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
        ])
        #expect(machine.responseHead(switching, untilClose: false, now: .at(1)).seen == .upgrade(status: 101))
        #expect(machine.isClosed)
        #expect(machine.timeout.deadline == nil)
        #expect(machine.channelClosed().seen == Seen.none)
        #expect(machine.errorCaught(CancellationError()).seen == Seen.none)
        #expect(machine.startAttempt(isHEAD: false, keepAlive: true, endQueued: true, now: .at(2)) == .refuseClosed)
    }

    /// RFC 6455's sample: the key `dGhlIHNhbXBsZSBub25jZQ==` is answered by `s3pPLMBiTxaQ9kYGzzhZRbK+xOo=`.
    @Test func theAcceptValueIsTheRFCs() {
        let upgrade = WebSocketUpgrade(requestKey: " dGhlIHNhbXBsZSBub25jZQ== ")
        #expect(upgrade.expectedAccept == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(upgrade.problem(with: ["upgrade": "WebSocket", "connection": "keep-alive, Upgrade", "sec-websocket-accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="]) == nil)
        #expect(upgrade.problem(with: ["upgrade": "websocket", "connection": "upgrade"]) == "101 without Sec-WebSocket-Accept")
    }

    @Test func bytesThatDoNotFrameFailTheExchangeOrCloseAnIdleConnection() {
        var machine = Machine(requestTimeout: .seconds(5))
        _ = machine.startGET(at: 0)
        #expect(machine.malformedResponse(.contentLengthWithTransferEncoding).seen == .failed(.violation(.malformed(.contentLengthWithTransferEncoding))))
        #expect(machine.isClosed)
        #expect(machine.malformedResponse(.malformedChunk).seen == Seen.none)

        var idle = Machine(requestTimeout: .seconds(5))
        #expect(idle.malformedResponse(.unsolicitedBytes).seen == .close)
        #expect(idle.isClosed)
    }

    @Test func aStaleWriterIsRefusedAndItsCompletionsIgnored() {
        var machine = Machine(requestTimeout: .seconds(5))
        let first = machine.startStreamed(at: 0)
        #expect(machine.requestWrite(attemptID: first, isEnd: true, now: .at(0)) == .write)
        _ = machine.writeSucceeded(attemptID: first, isEnd: true, now: .at(0))
        _ = machine.responseHead(.ok(length: 0), untilClose: false, now: .at(0))
        _ = machine.responseEnd(bytesFollow: false)
        let second = machine.startStreamed(at: 1)
        #expect(machine.requestWrite(attemptID: first, isEnd: false, now: .at(1)) == .refuse(beforeHead: true))
        #expect(machine.writeSucceeded(attemptID: first, isEnd: true, now: .at(1)).seen == Seen.none)
        #expect(machine.writeFailed(attemptID: first, error: ChannelError.eof).seen == Seen.none)
        #expect(machine.attempt?.id == second)
        #expect(machine.attempt?.outstandingWrites == 0)
    }
}
