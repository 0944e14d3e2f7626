import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// POSTs export bodies (``OTLPSpanEncoder``) to the collector: OTLP/HTTP,
/// `Content-Type: application/x-protobuf` and `tracing.headers`, over one
/// kept-alive HTTP/1.1 connection (TLS for an `https` endpoint, the system's
/// trust roots) on the export's own event loop. A connection that failed,
/// timed out or was closed by the collector is dropped and the next export
/// connects again. Each export is bounded by `timeout` (connect included).
///
/// Only ever called on `eventLoop`, one export at a time (``SpanExporter``):
/// the connection is loop-bound state.
final class OTLPHTTPExporter: Sendable {
    /// Why an export did not reach the collector, beyond the connection's own errors.
    enum Failure: Error, CustomStringConvertible {
        case timedOut(TimeAmount)
        case connectionClosed
        case status(HTTPResponseStatus)

        var description: String {
            switch self {
            case .timedOut(let timeout): "no answer within \(timeout.nanoseconds / 1_000_000_000) s"
            case .connectionClosed: "the collector closed the connection before answering"
            case .status(let status): "the collector answered \(status.code) \(status.reasonPhrase)"
            }
        }
    }

    let endpoint: OTLPEndpoint
    let eventLoop: any EventLoop
    let timeout: TimeAmount
    private let headers: HTTPHeaders
    private let tlsContext: NIOSSLContext?
    private let channel: NIOLoopBoundBox<(any Channel)?>

    /// Throws when the TLS context cannot be made (an `https` endpoint).
    init(endpoint: OTLPEndpoint, headers: [(String, String)], eventLoop: any EventLoop, timeout: TimeAmount = .seconds(10)) throws {
        self.endpoint = endpoint
        self.eventLoop = eventLoop
        self.timeout = timeout
        var fields = HTTPHeaders()
        fields.add(name: "Host", value: endpoint.authority)
        fields.add(name: "Content-Type", value: "application/x-protobuf")
        fields.add(name: "User-Agent", value: "gateway-otlp")
        for (name, value) in headers { fields.add(name: name, value: value) }
        self.headers = fields
        self.tlsContext = endpoint.tls ? try NIOSSLContext(configuration: .makeClientConfiguration()) : nil
        self.channel = NIOLoopBoundBox.makeEmptyBox(valueType: (any Channel).self, eventLoop: eventLoop)
    }

    /// POSTs `body`; succeeds when the collector answers 2xx, fails otherwise. On `eventLoop`.
    func send(_ body: ByteBuffer) -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        let promise = eventLoop.makePromise(of: Void.self)
        let timeout = self.timeout
        let deadline = eventLoop.scheduleTask(in: timeout) { promise.fail(Failure.timedOut(timeout)) }
        var fields = headers
        fields.add(name: "Content-Length", value: String(body.readableBytes))
        let head = HTTPRequestHead(version: .http1_1, method: .POST, uri: endpoint.target, headers: fields)
        connection().whenComplete { result in
            switch result {
            case .success(let channel):
                channel.writeAndFlush(OTLPExportRequest(head: head, body: body, promise: promise)).whenFailure { promise.fail($0) }
            case .failure(let error):
                promise.fail(error)
            }
        }
        promise.futureResult.whenComplete { [self] result in
            deadline.cancel()
            // A connection in an unknown state is not reused.
            if case .failure = result { disconnect() }
        }
        return promise.futureResult
    }

    /// Closes the connection, if any. On `eventLoop`.
    func disconnect() {
        eventLoop.preconditionInEventLoop()
        channel.value?.close(promise: nil)
        channel.value = nil
    }

    /// The open connection, or a new one.
    private func connection() -> EventLoopFuture<any Channel> {
        if let open = channel.value, open.isActive { return eventLoop.makeSucceededFuture(open) }
        channel.value = nil
        let endpoint = self.endpoint
        let tlsContext = self.tlsContext
        return ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tlsContext {
                        let tls = try NIOSSLClientHandler(context: tlsContext, serverHostname: endpoint.hostIsAddress ? nil : endpoint.host)
                        try channel.pipeline.syncOperations.addHandler(tls)
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(OTLPResponseHandler())
                }
            }
            .connect(host: endpoint.host, port: endpoint.port)
            .map { [self] connected in
                channel.value = connected
                return connected
            }
    }
}
