import GatewayCore
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// The body of a client request, read on demand from the connection's inbound
/// stream (so a slow upstream slows the client down instead of filling memory).
///
/// Single consumer: the upstream client pulls with `next()`. When the exchange is
/// over, the connection takes the stream back with `finish(drainingUpTo:)`, which
/// waits for a read in progress and reads what the consumer left, if small.
final class ClientRequestBody: BodySource, @unchecked Sendable {
    typealias Iterator = NIOAsyncChannelInboundStream<HTTPServerRequestPart>.AsyncIterator

    private struct State {
        var finished = false
        var failure: (any Error)?
        var reading = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var bytesRead = 0
        var needsContinue: Bool
        var responseStarted = false
    }

    // `iterator` is only touched by whoever holds `reading` (checked under the lock).
    private var iterator: Iterator
    private let state: NIOLockedValueBox<State>
    private let outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>

    init(iterator: Iterator, expectsContinue: Bool, outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>) {
        self.iterator = iterator
        self.state = NIOLockedValueBox(State(needsContinue: expectsContinue))
        self.outbound = outbound
    }

    var bytesRead: Int { state.withLockedValue { $0.bytesRead } }
    var isFinished: Bool { state.withLockedValue { $0.finished } }
    /// True when `100 Continue` was expected and never sent: the client still holds the body back.
    var isHoldingBackBody: Bool { state.withLockedValue { $0.needsContinue && !$0.finished } }

    /// The final response is about to be written: no `100 Continue` after it.
    func responseWillStart() {
        state.withLockedValue { $0.responseStarted = true }
    }

    func next() async throws -> ByteBuffer? {
        let sendContinue: Bool? = try state.withLockedValue { s in
            if s.finished { return nil }
            if let failure = s.failure { throw failure }
            precondition(!s.reading, "ClientRequestBody has one consumer at a time")
            s.reading = true
            defer { s.needsContinue = false }
            return s.needsContinue && !s.responseStarted
        }
        guard let sendContinue else { return nil }
        do {
            if sendContinue {
                try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: .continue)))
            }
            let part = try await iterator.next()
            return try finishRead(part)
        } catch {
            let error = (error as? GatewayError) ?? GatewayError(.badRequest, "the client request body ended early", cause: error)
            endRead { $0.failure = error }
            throw error
        }
    }

    private func finishRead(_ part: HTTPServerRequestPart?) throws -> ByteBuffer? {
        switch part {
        case .body(let buffer):
            endRead { $0.bytesRead += buffer.readableBytes }
            return buffer
        case .end:
            endRead { $0.finished = true }
            return nil
        case .head, nil:
            throw GatewayError(.badRequest, "the client closed the connection before the request body was complete")
        }
    }

    private func endRead(_ update: (inout State) -> Void) {
        let waiters = state.withLockedValue { s in
            update(&s)
            s.reading = false
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func cancel() {
        // The consumer stopped early; the connection decides whether to drain or close.
    }

    /// Waits for a read in progress, then reads and discards what is left if it is
    /// at most `limit` bytes. Returns the iterator when the body is complete, nil
    /// if the connection cannot be reused.
    func finish(drainingUpTo limit: Int) async -> Iterator? {
        while true {
            let busy = state.withLockedValue { $0.reading }
            guard busy else { break }
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLockedValue { s -> Bool in
                    if s.reading { s.waiters.append(c); return false }
                    return true
                }
                if resumeNow { c.resume() }
            }
        }
        let (finished, failed, holdingBack) = state.withLockedValue { ($0.finished, $0.failure != nil, $0.needsContinue) }
        if finished { return iterator }
        if failed || holdingBack { return nil }
        var drained = 0
        do {
            while let part = try await iterator.next() {
                switch part {
                case .body(let buffer):
                    drained += buffer.readableBytes
                    if drained > limit { return nil }
                case .end:
                    state.withLockedValue { $0.finished = true }
                    return iterator
                case .head:
                    return nil
                }
            }
        } catch {
            return nil
        }
        return nil
    }
}
