import GatewayCore
import NIOCore
import NIOHTTP1

/// The response side: head, body chunks with back-pressure, end, errors, close.
extension UpstreamExchangeHandler {
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            receivedHead(head)
        case .body(let chunk):
            guard let exchange, exchange.headPromise == nil else {
                return protocolError("response body without a response in flight")
            }
            noteProgress()
            exchange.body?.yield(chunk)
        case .end:
            guard exchange != nil, exchange?.headPromise == nil else {
                return protocolError("response end without a response in flight")
            }
            exchange?.responseComplete = true
            exchange?.recorder.ended()
            let body = exchange?.body
            let deferredHead = exchange?.deferredHead
            if body?.isCancelled == true {
                // The consumer gave up first; its cancellation closes the connection.
                exchange?.responseKeepAlive = false
            }
            // Back to the pool before the consumer sees the end, so that its next
            // request finds the connection idle.
            finishIfComplete()
            if let deferredHead { deferredHead.promise.succeed(deferredHead.head) }
            body?.finish()
        }
    }

    private func receivedHead(_ head: HTTPResponseHead) {
        guard var current = exchange, let promise = current.headPromise else {
            return protocolError("response without a request in flight")
        }
        guard head.status.code >= 200 else {
            // 1xx other than 101 are dropped by the decoder; we never ask for an upgrade.
            return protocolError("unexpected \(head.status.code) response")
        }
        current.headPromise = nil
        current.responseKeepAlive = head.isKeepAlive
        current.recorder.responseHead(status: Int(head.status.code))
        let hasBody = !(current.isHEAD || head.status == .noContent || head.status == .notModified
            || head.upstreamContentLength == 0)
        if hasBody {
            current.body = makeBodyStream(exchangeID: current.id)
        }
        let result = UpstreamResponseHead(head: head, body: current.body)
        if !hasBody {
            // Its end follows at once; hand the head over then.
            current.deferredHead = (promise, result)
        }
        exchange = current
        noteProgress()
        updateTimer()
        if hasBody {
            promise.succeed(result)
        }
    }

    private func makeBodyStream(exchangeID: Int) -> ResponseBodyStream {
        let eventLoop = self.eventLoop
        let handler = NIOLoopBound(self, eventLoop: eventLoop)
        return ResponseBodyStream(
            onDemand: {
                eventLoop.execute { handler.value.consumerDemand(exchangeID: exchangeID) }
            },
            onCancel: {
                eventLoop.execute { handler.value.cancel(exchangeID: exchangeID) }
            }
        )
    }

    private func protocolError(_ message: String) {
        fail(GatewayError(.upstreamProtocolError, "the upstream sent a malformed response: \(message)", upstream: upstream))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        markClosed()
        if let exchange {
            fail(GatewayError.upstreamClosed(upstream: upstream, beforeHead: exchange.headPromise != nil))
        }
        context.fireChannelInactive()
    }

    // MARK: Back-pressure

    /// Holds the read while the consumer is behind; the consumer's demand releases it.
    func read(context: ChannelHandlerContext) {
        if let exchange, !exchange.responseComplete, let body = exchange.body, body.shouldPauseReading() {
            heldRead = true
            updateTimer()
            return
        }
        context.read()
    }

    /// The consumer drained the body buffer below its low watermark.
    func consumerDemand(exchangeID: Int) {
        guard exchange == nil || exchange?.id == exchangeID else { return }
        resumeHeldRead()
        updateTimer()
    }

    func resumeHeldRead() {
        guard heldRead, let context else { return }
        heldRead = false
        context.read()
    }
}

extension HTTPResponseHead {
    /// The `Content-Length` of the response, nil when absent, invalid, ambiguous,
    /// or overridden by `Transfer-Encoding`.
    var upstreamContentLength: Int? {
        guard !headers.contains(name: "transfer-encoding") else { return nil }
        let values = headers[canonicalForm: "content-length"]
        guard let first = values.first, values.allSatisfy({ $0 == first }),
            let length = Int(first), length >= 0
        else { return nil }
        return length
    }
}
