import GatewayCore
import Logging
import NIOCore
import NIOHTTP1

/// A request whose upstream has a policy that may have to wait (retry with
/// backoff, a rate-limit queue, an OAuth2 refresh): the async policy chain
/// runs in one task on the connection's event loop; the request body reaches
/// it through a ``BodyStream`` the handler feeds (reads held at its high
/// watermark), and the response comes back to the handler, its body pulled
/// one chunk per write.
final class ChainExchange: ClientExchange {
    private let handler: ClientConnectionHandler
    private let info: ExchangeInfo
    private var request: ProxyRequest
    private let chain: any ProxyHandler
    private let eventLoop: any EventLoop
    private let executor: EventLoopTaskExecutor
    private var body: BodyStream?
    private var task: Task<Void, Never>?
    private var responseSource: (any BodySource)?
    private var status: Int?
    private var bytesIn = 0
    private var bytesOut = 0
    private var finished = false

    init(handler: ClientConnectionHandler, info: ExchangeInfo, request: ProxyRequest, chain: any ProxyHandler, eventLoop: any EventLoop) {
        self.handler = handler
        self.info = info
        self.request = request
        self.chain = chain
        self.eventLoop = eventLoop
        self.executor = handler.taskExecutor(on: eventLoop)
    }

    func start() {
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        if !request.bodyLengthIsZero {
            let handler = NIOLoopBound(self.handler, eventLoop: eventLoop)
            let stream = BodyStream(
                onDemand: { handler.eventLoop.execute { handler.value.resumeReading() } },
                onCancel: {}
            )
            body = stream
            request.body = .stream(stream, declaredLength: request.body.declaredLength)
            if info.expectsContinue, info.version.minor >= 1 {
                handler.value.context?.writeAndFlush(NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
            }
        }
        let request = self.request
        let context = info.context
        let chain = self.chain
        task = Task(executorPreference: executor) {
            let result: Result<ProxyResponse, any Error>
            do {
                result = .success(try await chain.handle(request, context: context))
            } catch {
                result = .failure(error)
            }
            bound.eventLoop.execute { bound.value.responded(result) }
        }
    }

    // MARK: Request side

    var wantsRequestBody: Bool {
        guard let body, !finished else { return true }
        return !body.shouldPauseReading()
    }

    func requestBodyPart(_ buffer: ByteBuffer) {
        bytesIn += buffer.readableBytes
        info.observeRequestBody(buffer)
        body?.yield(buffer)
    }

    func requestEnd() {
        body?.finish()
    }

    func clientWritable() {}

    func cancel() {
        guard !finished else { return }
        finished = true
        task?.cancel()
        responseSource?.cancel()
        body?.fail(GatewayError(.badRequest, "the client closed the connection before the request body was complete"))
        info.finish(ExchangeOutcome(status: status, responseBytes: bytesOut, error: nil, cancelled: true))
    }

    // MARK: Response side

    private func responded(_ result: Result<ProxyResponse, any Error>) {
        guard !finished else {
            if case .success(let response) = result { response.body.discard() }
            return
        }
        switch result {
        case .success(let response):
            status = Int(response.status.code)
            let framing = handler.sendResponseHead(status: response.status, headers: response.headers, declaredLength: response.body.declaredLength, info: info)
            switch response.body.storage {
            case .stream(let source) where !framing.bodyless:
                responseSource = source
                pullNext()
            case .bytes(let buffer) where !framing.bodyless && buffer.readableBytes > 0:
                bytesOut = buffer.readableBytes
                handler.sendResponseBodyPart(buffer)
                end()
            default:
                response.body.discard()
                end()
            }
        case .failure(let error):
            if error is CancellationError { return }
            let gatewayError = (error as? GatewayError) ?? GatewayError(.internalError, "the gateway failed to forward the request", cause: error)
            if gatewayError.code == .internalError {
                info.logger.error("forwarding failed", metadata: ["error": "\(error)"])
            }
            finished = true
            let code = Int(gatewayError.status.code)
            log(status: code, error: gatewayError.code)
            info.finish(ExchangeOutcome(status: code, responseBytes: 0, error: gatewayError.code))
            handler.respond(gatewayError.response(), info: info, addVia: true, keepAlive: false)
        }
    }

    /// Pulls the next chunk of the response body (in a task: the source may wait).
    private func pullNext() {
        guard let source = responseSource, !finished else { return }
        switch Result(catching: { try source.nextIfReady() }) {
        case .success(.chunk(let chunk)):
            return write(chunk)
        case .success(.end):
            return end()
        case .failure(let error):
            return bodyFailed(error)
        case .success(.notReady):
            break
        }
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        Task(executorPreference: executor) {
            let next: Result<ByteBuffer?, any Error>
            do {
                next = .success(try await source.next())
            } catch {
                next = .failure(error)
            }
            bound.eventLoop.execute {
                switch next {
                case .success(.some(let chunk)): bound.value.write(chunk)
                case .success(.none): bound.value.end()
                case .failure(let error): bound.value.bodyFailed(error)
                }
            }
        }
    }

    private func write(_ chunk: ByteBuffer) {
        guard !finished, let context = handler.context else { return }
        bytesOut += chunk.readableBytes
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(chunk)))).assumeIsolated().whenComplete { result in
            switch result {
            case .success: self.pullNext()
            case .failure(let error): self.bodyFailed(error)
            }
        }
    }

    private func end() {
        guard !finished else { return }
        finished = true
        log(status: status ?? 0, error: nil)
        info.finish(ExchangeOutcome(status: status, responseBytes: bytesOut, error: nil))
        handler.sendResponseEnd()
    }

    private func bodyFailed(_ error: any Error) {
        guard !finished else { return }
        finished = true
        responseSource?.cancel()
        let code = (error as? GatewayError)?.code ?? .connectionReset
        info.logger.info("\(ExchangeLogLine.text(of: info.method)) \(ExchangeLogLine.withoutQueryValues(request.url)) aborted: \(error)")
        info.finish(ExchangeOutcome(status: status, responseBytes: bytesOut, error: code))
        handler.machine.closeAfterWrite()
        handler.context?.close(promise: nil)
    }

    private func log(status: Int, error: GatewayError.Code?) {
        ExchangeLogLine.log(
            info.context, method: info.method, url: request.url, status: status, started: info.started,
            bytesIn: bytesIn, bytesOut: bytesOut, upstream: request.upstreamName, error: error
        )
    }
}
