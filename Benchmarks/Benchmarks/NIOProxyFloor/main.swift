// The floor of the gateway's design, for issue 14: the least an HTTP/1 forward
// proxy built on SwiftNIO's HTTP codec on both sides can do per request. One
// upstream connection per client connection (opened on the first request,
// reused), request and response parts passed across unchanged except the
// absolute-form target, no policies, no metrics, no header checks, no pool.
// scripts/bench.sh measures it beside the gateway (`--only floor`): whatever
// the gateway spends above it is the gateway's own code; whatever this spends
// above HAProxy is NIOHTTP1's decode/encode and the pipeline.
//
//   NIOProxyFloor PORT
import FloorSupport
import NIOCore
import NIOHTTP1

final class FloorUpstreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    private let client: any Channel

    init(client: any Channel) { self.client = client }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            client.write(HTTPServerResponsePart.head(HTTPResponseHead(version: head.version, status: head.status, headers: head.headers)), promise: nil)
        case .body(let buffer):
            client.write(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
        case .end(let trailers):
            client.writeAndFlush(HTTPServerResponsePart.end(trailers), promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) { client.close(promise: nil) }
}

final class FloorClientHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    private let upstream = UpstreamSlot<HTTPClientRequestPart>()
    private var host = ""
    private var port = 0
    private var configure: @Sendable (any Channel) throws -> Void = { _ in }

    func handlerAdded(context: ChannelHandlerContext) {
        let client = context.channel
        configure = { channel in
            try channel.pipeline.syncOperations.addHTTPClientHandlers()
            try channel.pipeline.syncOperations.addHandler(FloorUpstreamHandler(client: client))
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(var head):
            guard let target = Self.split(head.uri) else { context.close(promise: nil); return }
            head.uri = target.path
            (host, port) = (target.host, target.port)
            upstream.send(.head(head), flush: false, context: context, host: host, port: port, configure: configure)
        case .body(let buffer):
            upstream.send(.body(.byteBuffer(buffer)), flush: false, context: context, host: host, port: port, configure: configure)
        case .end(let trailers):
            upstream.send(.end(trailers), flush: true, context: context, host: host, port: port, configure: configure)
        }
    }

    func channelInactive(context: ChannelHandlerContext) { upstream.close() }

    /// `http://host:port/path` → (host, port, /path).
    static func split(_ uri: String) -> (host: String, port: Int, path: String)? {
        guard uri.hasPrefix("http://") else { return nil }
        let rest = uri.dropFirst(7)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        let path = slash == rest.endIndex ? "/" : String(rest[slash...])
        if let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]) {
            return (String(authority[..<colon]), port, path)
        }
        return (String(authority), 80, path)
    }
}

try serveFloor(name: "NIOProxyFloor", defaultPort: 8090) { channel in
    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false)
    try channel.pipeline.syncOperations.addHandler(FloorClientHandler())
}
