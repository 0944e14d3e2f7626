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
            guard let exchange, !exchange.awaitingHead else {
                return protocolError("response body without a response in flight")
            }
            noteProgress()
            exchange.delegate.upstreamResponseBodyPart(chunk)
        case .end:
            guard let ended = exchange, !ended.awaitingHead else {
                return protocolError("response end without a response in flight")
            }
            exchange?.responseComplete = true
            ended.recorder.ended()
            // Back to the pool before the delegate sees the end, so that its next
            // request finds the connection idle.
            finishIfComplete()
            ended.delegate.upstreamResponseEnd()
        }
    }

    private func receivedHead(_ head: HTTPResponseHead) {
        guard var current = exchange, current.awaitingHead else {
            return protocolError("response without a request in flight")
        }
        guard head.status.code >= 200 else {
            // 1xx other than 101 are dropped by the decoder; we never ask for an upgrade.
            return protocolError("unexpected \(head.status.code) response")
        }
        current.awaitingHead = false
        current.responseKeepAlive = head.isKeepAlive
        current.recorder.responseHead(status: Int(head.status.code))
        let contentLength = head.upstreamContentLength
        let hasBody = !(current.isHEAD || head.status == .noContent || head.status == .notModified || contentLength == 0)
        exchange = current
        noteProgress()
        updateTimer()
        var headers = head.headers
        if headers.contains(name: "transfer-encoding") {
            headers.remove(name: "content-length")
        }
        HopByHopHeaders.removeAll(from: &headers)
        current.delegate.upstreamResponseHead(
            UpstreamResponseHead(status: head.status, headers: headers, declaredLength: contentLength, hasBody: hasBody)
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
            fail(GatewayError.upstreamClosed(upstream: upstream, beforeHead: exchange.awaitingHead))
        }
        context.fireChannelInactive()
    }

    // MARK: Back-pressure

    /// Holds the read while the delegate cannot take more; its demand releases it.
    func read(context: ChannelHandlerContext) {
        if let exchange, !exchange.awaitingHead, !exchange.responseComplete, exchange.delegate.upstreamShouldPauseReading {
            heldRead = true
            updateTimer()
            return
        }
        context.read()
    }

    /// The delegate can take more of the response.
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
