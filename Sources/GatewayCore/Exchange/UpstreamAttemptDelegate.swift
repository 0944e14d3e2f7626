public import NIOCore
public import NIOHTTP1

/// A response head as it leaves the upstream client: end-to-end headers only
/// (hop-by-hop ones removed), the announced length, and whether a body follows.
public struct UpstreamResponseHead: Sendable {
    public var status: HTTPResponseStatus
    /// As the upstream sent them until read (``ResponseFields``).
    public var fields: ResponseFields
    /// `Content-Length` when valid and not overridden by `Transfer-Encoding`.
    public var declaredLength: Int?
    /// False for HEAD, 1xx/204/304 and `Content-Length: 0`: `upstreamResponseEnd` follows at once.
    public var hasBody: Bool

    public init(status: HTTPResponseStatus, fields: ResponseFields, declaredLength: Int?, hasBody: Bool) {
        self.status = status
        self.fields = fields
        self.declaredLength = declaredLength
        self.hasBody = hasBody
    }

    public init(status: HTTPResponseStatus, headers: HTTPHeaders, declaredLength: Int?, hasBody: Bool) {
        self.init(status: status, fields: ResponseFields(headers), declaredLength: declaredLength, hasBody: hasBody)
    }

    /// The fields as `HTTPHeaders`: made from the upstream's bytes on every read.
    public var headers: HTTPHeaders {
        get { fields.headers }
        set { fields.headers = newValue }
    }
}

/// Receives one upstream attempt, called on the event loop that started it.
///
/// The order is fixed: `upstreamAttemptStarted`, then `upstreamResponseHead`,
/// any number of `upstreamResponseBodyPart` (each read's parts followed by
/// `upstreamReadComplete`), `upstreamResponseTrailers` when the upstream sent
/// trailer fields (an HTTP/2 upstream: gRPC's `grpc-status`), `upstreamResponseEnd`; or
/// `upstreamAttemptFailed` at any point, after which nothing more is called.
/// By `upstreamResponseEnd` the connection is already back in the pool. A
/// WebSocket handshake answered `101` ends with `upstreamUpgraded` instead of
/// a head: the connection is the receiver's from then on.
public protocol UpstreamAttemptDelegate: AnyObject {
    /// The connection is leased and the request head written: the request body goes to `writer`.
    func upstreamAttemptStarted(_ writer: any UpstreamRequestWriter)
    func upstreamResponseHead(_ head: UpstreamResponseHead)
    func upstreamResponseBodyPart(_ buffer: ByteBuffer)
    /// The end of one read from the upstream socket (NIO's `channelReadComplete`),
    /// after the parts it carried: the receiver flushes what they gave it, so a
    /// response that arrives in several parts in one read goes out in one write.
    func upstreamReadComplete()
    /// Trailer fields after the last body part, just before ``upstreamResponseEnd()``.
    func upstreamResponseTrailers(_ trailers: HTTPHeaders)
    func upstreamResponseEnd()
    func upstreamAttemptFailed(_ error: any Error)
    /// The upstream answered `101 Switching Protocols` to a WebSocket handshake
    /// (``ProxyRequest/isWebSocketHandshake``): `head` is the 101 (its
    /// end-to-end fields: `Sec-WebSocket-Accept`, a subprotocol) and `tunnel`
    /// the connection, out of the pool, for the receiver to splice or close.
    func upstreamUpgraded(_ head: UpstreamResponseHead, tunnel: UpstreamTunnel)
    /// Asked before each read from the upstream: true while the receiver cannot
    /// take more (the client socket is not writable). It calls
    /// ``UpstreamRequestWriter/resumeReading()`` when it can again.
    var upstreamShouldPauseReading: Bool { get }
}

/// The request side of a started attempt, used on its event loop. Not
/// class-bound: the connection's writer is a handler and an attempt id, a
/// value that fits in the existential without an allocation per attempt.
public protocol UpstreamRequestWriter {
    /// Writes a chunk of the request body (with `isLast`, the end of the request in
    /// the same flush). The future completes when the chunk reached the socket.
    func writeBodyPart(_ chunk: ByteBuffer, isLast: Bool) -> EventLoopFuture<Void>
    /// Ends a request body whose length was not known.
    func endRequest() -> EventLoopFuture<Void>
    /// The request body could not be read (client gone, body cut short): the attempt fails.
    func abort(_ error: any Error)
    /// The receiver can take more of the response: a read held back goes out.
    func resumeReading()
}

/// Starts upstream attempts whose response parts go straight to a delegate on
/// the caller's event loop: the upstream pool. No task, no continuation.
/// Class-bound: every exchange keeps its transport in one reference (16 bytes
/// with its witness table, not a 40-byte existential box).
public protocol UpstreamTransport: AnyObject, Sendable {
    /// Starts one attempt of `request` (its body, if any, is written by the
    /// delegate through the writer it gets). `eventLoop` is the caller's: the
    /// delegate is called there. Returns a handle that cancels the attempt.
    @discardableResult
    func startAttempt(
        _ request: ProxyRequest,
        record: ExchangeRecord,
        on eventLoop: any EventLoop,
        delegate: any UpstreamAttemptDelegate
    ) -> UpstreamAttemptCancellation
}

/// Cancels an attempt started with ``UpstreamTransport/startAttempt(_:record:on:delegate:)``
/// (the client went away): a waiting lease is withdrawn, a started attempt fails
/// and its connection is closed. Call on the attempt's event loop.
public struct UpstreamAttemptCancellation: Sendable {
    private let body: @Sendable () -> Void

    public init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
    }

    public func cancel() { body() }

    /// For an attempt that was started at once: nothing waits that could be
    /// withdrawn (the attempt itself ends through its writer). Shared, no allocation.
    public static let nothingToCancel = UpstreamAttemptCancellation {}
}

extension UpstreamAttemptDelegate {
    /// A receiver that passes no trailers on (a test's recorder) need not implement it.
    public func upstreamResponseTrailers(_ trailers: HTTPHeaders) {}
}
