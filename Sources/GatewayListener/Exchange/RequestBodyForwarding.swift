import NIOCore

/// The request body's way upstream on the event loop, as a pure value:
/// parts the client sent wait here until the upstream connection takes them,
/// one write in flight at a time (the client's reads are held meanwhile), the
/// last part flagged when the declared length is reached, and the end of a
/// body of unknown length written once. Events in, the next write out; no I/O.
/// Once the attempt it feeds is given up (``detach()``), parts go nowhere: a
/// later attempt sends the exchange's copy of the body (``RequestReplayBuffer``).
struct RequestBodyForwarding {
    /// What to write upstream next.
    enum Write: Equatable {
        /// A part of the body; `isLast` when it completes the declared length.
        case part(ByteBuffer, isLast: Bool)
        /// The end of a body of unknown length (chunked).
        case end
    }

    private let declaredLength: Int?
    /// Parts that arrived before the upstream took them (a few at most). An
    /// array: empty, it allocates nothing, and most requests have no body.
    private var pending: [ByteBuffer] = []
    private var writeInFlight = false
    private var bytesSent = 0
    /// The client's request ended (its last part arrived).
    private(set) var requestEnded = false
    /// The upstream was told of the end (or needs not be: no body, or detached).
    private(set) var endSent: Bool
    /// The attempt this body went to was given up: nothing more goes upstream.
    private(set) var detached = false

    /// - Parameters:
    ///   - declaredLength: the body's length when known (`Content-Length`), nil when chunked.
    ///   - bodyless: nothing goes upstream after the head.
    init(declaredLength: Int?, bodyless: Bool) {
        self.declaredLength = declaredLength
        self.endSent = bodyless
    }

    /// Bytes of the body written upstream so far.
    var sent: Int { bytesSent }

    mutating func received(_ part: ByteBuffer) {
        assert(!requestEnded, "a body part after the request's end")
        guard !detached else { return }
        pending.append(part)
    }

    mutating func ended() {
        requestEnded = true
    }

    /// The next write when the upstream can take one (`writerReady`) and none
    /// is in flight; it is then in flight until ``writeCompleted()``.
    mutating func nextWrite(writerReady: Bool) -> Write? {
        guard writerReady, !writeInFlight else { return nil }
        if !pending.isEmpty {
            let part = pending.removeFirst()
            bytesSent += part.readableBytes
            let isLast = declaredLength == bytesSent
            if isLast { endSent = true }
            writeInFlight = true
            return .part(part, isLast: isLast)
        }
        guard requestEnded, !endSent else { return nil }
        endSent = true
        writeInFlight = true
        return .end
    }

    mutating func writeCompleted() {
        assert(writeInFlight || detached, "a write completed that was not in flight")
        writeInFlight = false
    }

    /// Whether the client's reads may go on: the whole request is in (what
    /// follows is the next request), the upstream has taken everything, or
    /// the body goes upstream no more.
    func wantsMore(writerReady: Bool) -> Bool {
        requestEnded || detached || (writerReady && !writeInFlight && pending.isEmpty)
    }

    /// The attempt was given up: what is pending is dropped, and so is every
    /// later part; no write is offered any more.
    mutating func detach() {
        detached = true
        endSent = true
        pending = []
    }

    /// Forgets what is pending (the exchange is over).
    mutating func reset() {
        pending = []
    }
}
