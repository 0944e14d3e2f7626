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
import NIOCore
import NIOHTTP1
import NIOPosix

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
    private var upstream: (any Channel)?
    private var pending: [HTTPClientRequestPart] = []
    private var connecting = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(var head):
            guard let target = Self.split(head.uri) else { context.close(promise: nil); return }
            head.uri = target.path
            send(.head(head), context: context, host: target.host, port: target.port)
        case .body(let buffer):
            send(.body(.byteBuffer(buffer)), context: context, host: "", port: 0)
        case .end(let trailers):
            send(.end(trailers), context: context, host: "", port: 0)
        }
    }

    private func send(_ part: HTTPClientRequestPart, context: ChannelHandlerContext, host: String, port: Int) {
        if let upstream {
            if case .end = part { upstream.writeAndFlush(part, promise: nil) } else { upstream.write(part, promise: nil) }
            return
        }
        pending.append(part)
        guard !connecting else { return }
        connecting = true
        let client = context.channel
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        ClientBootstrap(group: context.eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(FloorUpstreamHandler(client: client))
                }
            }
            .connect(host: host, port: port)
            .whenComplete { result in
                let handler = loopBound.value
                switch result {
                case .success(let channel):
                    handler.upstream = channel
                    for part in handler.pending { channel.write(part, promise: nil) }
                    channel.flush()
                    handler.pending = []
                case .failure:
                    client.close(promise: nil)
                }
            }
    }

    func channelInactive(context: ChannelHandlerContext) { upstream?.close(promise: nil) }

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

let port = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 8090 : 8090
let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
let server = try ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 4096)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false)
            try channel.pipeline.syncOperations.addHandler(FloorClientHandler())
        }
    }
    .bind(host: "127.0.0.1", port: port).wait()
print("NIOProxyFloor on \(server.localAddress!)")
try server.closeFuture.wait()
