import GatewayCore
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import GatewayUpstream

/// An upstream connection's pipeline on an `EmbeddedChannel`, as the connector
/// sets up a plain one: a read counter, then the ``UpstreamAttemptHandler``
/// under test. The test plays the upstream with raw bytes; time is the embedded loop's.
final class UpstreamAttemptHarness {
    let channel: EmbeddedChannel
    let handler: UpstreamAttemptHandler
    let reads = ReadCounter()
    /// What the handler told the pool, in order.
    private let releaseBox = NIOLockedValueBox<[Bool]>([])

    /// `below`: a handler between the channel and the read counter (one that
    /// keeps bytes in the channel's buffer after a flush, say).
    init(requestTimeout: TimeAmount = .seconds(30), below: (any ChannelHandler & Sendable)? = nil) throws {
        channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8080)).wait()
        let box = releaseBox
        handler = UpstreamAttemptHandler(
            upstream: "upstream.test:8080",
            requestTimeout: requestTimeout,
            eventLoop: channel.eventLoop,
            onRelease: { reusable in box.withLockedValue { $0.append(reusable) } }
        )
        if let below { try channel.pipeline.syncOperations.addHandler(below) }
        try channel.pipeline.syncOperations.addHandler(reads)
        try channel.pipeline.syncOperations.addHandler(handler)
    }

    var releases: [Bool] { releaseBox.withLockedValue { $0 } }

    /// Starts an attempt; returns the record its attempt writes into.
    @discardableResult
    func start(
        _ method: HTTPMethod = .GET,
        uri: String = "/",
        headers: HTTPHeaders = ["Host": "upstream.test"],
        body: UpstreamAttemptHandler.RequestBody = .none,
        upgrade: Bool = false,
        webSocketKey: String? = UpstreamAttemptHarness.sampleKey,
        delegate: RecordingDelegate
    ) throws -> ExchangeRecord {
        let record = ExchangeRecord()
        let index = record.beginAttempt(AttemptTimings(started: .now))
        var head = try HTTP1RequestHead(method: method, target: uri)
        for (name, value) in headers {
            if HopByHopHeaders.equalsIgnoringCase(name, "transfer-encoding") { head.addChunkedFraming() } else { try head.add(name: name, value: value) }
        }
        head.end()
        try handler.start(head: head, body: body, upgrade: upgrade ? WebSocketUpgrade(requestKey: webSocketKey) : nil, recorder: AttemptRecorder(record: record, index: index), delegate: delegate)
        return record
    }

    /// RFC 6455's sample handshake key, and the accept value that answers it.
    static let sampleKey = "dGhlIHNhbXBsZSBub25jZQ=="
    static let sampleAccept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

    /// Everything written to the upstream since the last call.
    func sent() throws -> String {
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            text += String(buffer: buffer)
        }
        return text
    }

    /// The upstream sends `bytes`.
    func respond(_ bytes: String) throws {
        try channel.writeInbound(ByteBuffer(string: bytes))
    }
}

/// Counts the reads that reach the socket (the first handler of the pipeline).
final class ReadCounter: ChannelOutboundHandler {
    typealias OutboundIn = Any
    private(set) var count = 0

    func read(context: ChannelHandlerContext) {
        count += 1
        context.read()
    }
}

/// Records what the handler tells an attempt's delegate, and pauses reads on request.
final class RecordingDelegate: UpstreamAttemptDelegate {
    enum Event: Equatable {
        case started
        case head(status: UInt, hasBody: Bool)
        case body(String)
        case end
        case failed(GatewayError.Code?)
        /// A handshake's 101, with the bytes read after it.
        case upgraded(status: UInt, leftover: String)
    }

    private(set) var events: [Event] = []
    private(set) var writer: (any UpstreamRequestWriter)?
    private(set) var head: UpstreamResponseHead?
    var pause = false

    func upstreamAttemptStarted(_ writer: any UpstreamRequestWriter) {
        self.writer = writer
        events.append(.started)
    }

    func upstreamResponseHead(_ head: UpstreamResponseHead) {
        self.head = head
        events.append(.head(status: head.status.code, hasBody: head.hasBody))
    }

    func upstreamResponseBodyPart(_ buffer: ByteBuffer) {
        events.append(.body(String(buffer: buffer)))
    }

    /// How many events had arrived at each `upstreamReadComplete` (the receiver's flush points).
    private(set) var readCompletes: [Int] = []

    func upstreamReadComplete() {
        readCompletes.append(events.count)
    }

    func upstreamResponseEnd() {
        events.append(.end)
    }

    func upstreamAttemptFailed(_ error: any Error) {
        events.append(.failed((error as? GatewayError)?.code))
    }

    var upstreamShouldPauseReading: Bool { pause }

    private(set) var tunnel: UpstreamTunnel?

    func upstreamUpgraded(_ head: UpstreamResponseHead, tunnel: UpstreamTunnel) {
        self.head = head
        self.tunnel = tunnel
        events.append(.upgraded(status: head.status.code, leftover: tunnel.leftover.map { String(buffer: $0) } ?? ""))
    }
}
