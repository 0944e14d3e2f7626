import NIOCore
import NIOHTTP1

/// One export, as written to the exporter's connection: the request and the
/// promise its answer completes.
struct OTLPExportRequest: Sendable {
    var head: HTTPRequestHead
    var body: ByteBuffer
    var promise: EventLoopPromise<Void>
}

/// The last handler of the exporter's connection (``OTLPHTTPExporter``):
/// writes an ``OTLPExportRequest`` as HTTP/1.1 parts and completes its
/// promise with the answer: success on 2xx once the response has ended (its
/// body, a partial-success report, is read and ignored), a failure on any
/// other status, an error or the connection closing first. A response that
/// does not keep the connection alive closes it.
final class OTLPResponseHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = OTLPExportRequest
    typealias OutboundOut = HTTPClientRequestPart

    private var pending: EventLoopPromise<Void>?
    private var head: HTTPResponseHead?

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = unwrapOutboundIn(data)
        pending?.fail(OTLPHTTPExporter.Failure.connectionClosed)
        pending = request.promise
        head = nil
        context.write(wrapOutboundOut(.head(request.head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(request.body))), promise: nil)
        context.write(wrapOutboundOut(.end(nil)), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let received):
            head = received
        case .body:
            break
        case .end:
            guard let head else { return }
            let promise = pending
            pending = nil
            self.head = nil
            if (200..<300).contains(head.status.code) {
                promise?.succeed(())
            } else {
                promise?.fail(OTLPHTTPExporter.Failure.status(head.status))
            }
            if !head.isKeepAlive { context.close(promise: nil) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        pending?.fail(OTLPHTTPExporter.Failure.connectionClosed)
        pending = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        pending?.fail(error)
        pending = nil
        context.close(promise: nil)
    }
}
