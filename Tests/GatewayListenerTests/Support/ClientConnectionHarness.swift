import GatewayConfig
import GatewayCore
@testable import GatewayListener
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1

/// A client connection's real pipeline (head timeout, codec, handler) on an
/// `EmbeddedChannel`, with a scripted upstream: raw request bytes go in, the
/// test plays the upstream's part through the delegate the handler gave the
/// transport, and the encoded response bytes come out. No socket, no thread.
final class ClientConnectionHarness {
    let channel = EmbeddedChannel()
    let transport = ScriptedTransport()
    let tracker: ConnectionTracker

    /// - Parameters:
    ///   - admission: the steps before routing; by default the access rules of `config`.
    ///   - tracker: share one to test limits across connections.
    init(
        config: GatewayConfig = GatewayConfig(), admission: [any AdmissionStep]? = nil, routes: RouteTable? = nil,
        tracker: ConnectionTracker = ConnectionTracker(), flushBatches: LoopFlushBatches? = nil
    ) throws {
        self.tracker = tracker
        let empty = UpstreamRoute(observers: [])
        let active = ActiveConfig(
            config: config, admission: admission ?? [AccessStep(access: config.access)],
            routes: routes ?? RouteTable(byUpstream: [:], unconfigured: empty), transport: transport
        )
        var logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        logger.logLevel = .critical
        let environment = ClientConnectionEnvironment(
            liveConfig: LiveConfig(active), tracker: tracker, logger: logger,
            requestIDs: RequestIDGenerator(), maxHeadBytes: config.limits.maxHeadBytes, flushBatches: flushBatches
        )
        let setup = ProxyChannelSetup(
            maxHeadBytes: config.limits.maxHeadBytes, timeouts: ClientTimeoutStateMachine.Limits(config.limits), environment: environment
        )
        try setup.configure(channel)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
    }

    /// Sends raw bytes as the client.
    func send(_ text: String) throws {
        try channel.writeInbound(ByteBuffer(string: text))
    }

    /// Everything written to the client so far, as text.
    func received() throws -> String {
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            text += String(buffer: buffer)
        }
        return text
    }

    /// Answers the last started attempt with a whole response.
    func answer(status: HTTPResponseStatus = .ok, body: String) {
        guard let attempt = transport.attempts.last else { return }
        attempt.delegate?.upstreamAttemptStarted(attempt.writer)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Length", value: "\(body.utf8.count)")
        attempt.delegate?.upstreamResponseHead(UpstreamResponseHead(status: status, headers: headers, declaredLength: body.utf8.count, hasBody: !body.isEmpty))
        if !body.isEmpty { attempt.delegate?.upstreamResponseBodyPart(ByteBuffer(string: body)) }
        attempt.delegate?.upstreamResponseEnd()
    }
}

/// An ``UpstreamTransport`` whose attempts the test plays by hand. Like the
/// pool, the cancellation handle holds the delegate strongly (the pool's
/// attempt does) and the transport itself keeps it only weakly, so a test can
/// see whether an exchange is freed once it ends.
final class ScriptedTransport: UpstreamTransport, @unchecked Sendable {
    final class Attempt {
        let request: ProxyRequest
        weak var delegate: (any UpstreamAttemptDelegate)?
        let writer: RecordingWriter
        var cancelled = false

        init(request: ProxyRequest, delegate: any UpstreamAttemptDelegate, eventLoop: any EventLoop) {
            self.request = request
            self.delegate = delegate
            self.writer = RecordingWriter(eventLoop: eventLoop)
        }
    }

    /// Only touched on the embedded loop (the test's thread).
    private(set) var attempts: [Attempt] = []

    func startAttempt(_ request: ProxyRequest, record: ExchangeRecord, on eventLoop: any EventLoop, delegate: any UpstreamAttemptDelegate) -> UpstreamAttemptCancellation {
        let attempt = Attempt(request: request, delegate: delegate, eventLoop: eventLoop)
        attempts.append(attempt)
        let held = UnsafeTransfer((attempt, delegate))
        return UpstreamAttemptCancellation { held.value.0.cancelled = true; _ = held.value.1 }
    }
}

/// The request side of a scripted attempt: records what the exchange wrote.
final class RecordingWriter: UpstreamRequestWriter {
    private(set) var body = ""
    private(set) var ended = false
    private(set) var aborted = false
    private(set) var resumed = 0
    private let eventLoop: any EventLoop

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func writeBodyPart(_ chunk: ByteBuffer, isLast: Bool) -> EventLoopFuture<Void> {
        body += String(buffer: chunk)
        if isLast { ended = true }
        return eventLoop.makeSucceededVoidFuture()
    }

    func endRequest() -> EventLoopFuture<Void> {
        ended = true
        return eventLoop.makeSucceededVoidFuture()
    }

    func abort(_ error: any Error) { aborted = true }
    func resumeReading() { resumed += 1 }
}

/// Carries a non-Sendable value into a `@Sendable` closure run on the one test thread.
struct UnsafeTransfer<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
