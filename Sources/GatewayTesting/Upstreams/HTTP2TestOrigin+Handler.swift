import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Answers the requests of one HTTP/2 stream (through the HTTP/1 codec), or of
/// one HTTP/1.1 connection, for ``HTTP2TestOrigin``.
final class HTTP2TestOriginHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let state: NIOLockedValueBox<HTTP2TestOrigin.State>
    private var head: HTTPRequestHead?

    init(state: NIOLockedValueBox<HTTP2TestOrigin.State>) {
        self.state = state
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            let request = HTTP2TestOrigin.Request(
                method: head.method, path: head.uri, headers: head.headers, protocolName: Self.protocolName(of: head)
            )
            state.withLockedValue { s in
                s.inFlight += 1
                s.maxInFlight = max(s.maxInFlight, s.inFlight)
                s.requests.append(request)
            }
        case .body:
            break
        case .end:
            guard let head else { return }
            self.head = nil
            if head.uri.hasPrefix("/delay/"), let milliseconds = Int64(head.uri.dropFirst("/delay/".count)) {
                context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(milliseconds)) {
                    self.respond(to: head, context: context)
                }
            } else {
                respond(to: head, context: context)
            }
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        state.withLockedValue { $0.inFlight -= 1 }
        let protocolName = Self.protocolName(of: head)
        var body = ByteBuffer(string: "\(head.method.rawValue) \(head.uri)\n")
        if head.uri.hasPrefix("/bytes/"), let count = Int(head.uri.dropFirst("/bytes/".count)) {
            body = ByteBuffer(repeating: UInt8(ascii: "x"), count: count)
        }
        var declaredLength: Int?
        if head.uri.hasPrefix("/wrong-length/") {
            let numbers = head.uri.dropFirst("/wrong-length/".count).split(separator: "/").compactMap { Int($0) }
            if numbers.count == 2 {
                declaredLength = numbers[0]
                body = ByteBuffer(repeating: UInt8(ascii: "x"), count: numbers[1])
            }
        }
        var headers = HTTPHeaders()
        headers.add(name: "x-method", value: head.method.rawValue)
        headers.add(name: "x-path", value: head.uri)
        headers.add(name: "x-authority", value: head.headers.first(name: "host") ?? "")
        if let echo = head.headers.first(name: "x-echo") { headers.add(name: "x-echo", value: echo) }
        // `/huge-head/N`: a field of N bytes (past a client's header list limit).
        if head.uri.hasPrefix("/huge-head/"), let count = Int(head.uri.dropFirst("/huge-head/".count)) {
            headers.add(name: "x-huge", value: String(repeating: "h", count: count))
        }
        // `/control-byte`: a field value with a control byte (allowed by HTTP/2's framing, not by HTTP/1.1).
        if head.uri == "/control-byte" { headers.add(name: "x-control", value: "a\u{01}b") }
        headers.add(name: "x-protocol", value: protocolName)
        let trailers: HTTPHeaders? = head.uri == "/trailers" && protocolName == "h2" ? ["grpc-status": "0", "x-trailer": "done"] : nil
        if trailers == nil { headers.add(name: "content-length", value: String(declaredLength ?? body.readableBytes)) }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(trailers)), promise: nil)
    }

    /// The codec gives an HTTP/2 stream's request version 2.0.
    private static func protocolName(of head: HTTPRequestHead) -> String {
        head.version.major == 2 ? "h2" : "http/1.1"
    }
}
