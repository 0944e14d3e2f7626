// The floor of a gateway that frames HTTP/1 itself (the follow-up to issue 14):
// the least a forward proxy on SwiftNIO's channels can do per request when it
// moves ByteBuffers and never builds NIOHTTP1's parts or HTTPHeaders' strings.
// Each request head is found by scanning for CRLFCRLF; its absolute-form target
// is cut to origin-form by copying the head's bytes around it; the response head
// is scanned for Content-Length to know where the response ends; every other
// byte is passed through as it came. Bodiless requests only (what wrk sends), one
// upstream connection per client connection, opened on the first request.
//
// Beside NIOProxyFloor (NIOHTTP1 on both sides) in scripts/bench.sh as
// `nio-byte-floor`: the difference between the two is what the HTTP codec and
// its per-part NIOAny boxing cost; this one's distance to HAProxy is what
// SwiftNIO's channel pipeline costs.
//
//   NIOByteFloor PORT
import FloorSupport
import NIOCore

/// Where an HTTP/1 response ends: after its head and Content-Length bytes.
struct ResponseFraming {
    private var head: ByteBuffer?
    private var remaining = 0

    /// Counts `buffer` against the response; true when the response is complete.
    mutating func consume(_ buffer: ByteBuffer) -> Bool {
        if remaining > 0 {
            remaining -= buffer.readableBytes
            return remaining <= 0
        }
        var bytes = buffer
        if var pending = head {
            pending.writeBuffer(&bytes)
            bytes = pending
        }
        guard let end = HeadScan.endOfHead(in: bytes) else {
            head = bytes
            return false
        }
        head = nil
        remaining = HeadScan.contentLength(in: bytes, headEnd: end) - (bytes.readableBytes - end)
        return remaining <= 0
    }
}

enum HeadScan {
    /// The offset just past CRLFCRLF (relative to the reader index), if the head is complete.
    static func endOfHead(in buffer: ByteBuffer) -> Int? {
        buffer.withUnsafeReadableBytes { raw -> Int? in
            guard raw.count >= 4 else { return nil }
            var i = 3
            while i < raw.count {
                if raw[i] == 10, raw[i - 1] == 13, raw[i - 2] == 10, raw[i - 3] == 13 { return i + 1 }
                i += 1
            }
            return nil
        }
    }

    /// The value of the first `Content-Length` line of the head (0 when absent).
    static func contentLength(in buffer: ByteBuffer, headEnd: Int) -> Int {
        buffer.withUnsafeReadableBytes { raw -> Int in
            let name = Array("content-length:".utf8)
            var lineStart = 0
            while lineStart < headEnd {
                var lineEnd = lineStart
                while lineEnd < headEnd, raw[lineEnd] != 10 { lineEnd += 1 }
                if lineEnd - lineStart > name.count {
                    var match = true
                    for k in 0..<name.count where raw[lineStart + k] | 0x20 != name[k] | 0x20 { match = false; break }
                    if match {
                        var value = 0
                        for k in (lineStart + name.count)..<lineEnd where raw[k] >= 48 && raw[k] <= 57 {
                            value = value * 10 + Int(raw[k] - 48)
                        }
                        return value
                    }
                }
                lineStart = lineEnd + 1
            }
            return 0
        }
    }
}

final class ByteUpstreamHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let client: any Channel
    private var framing = ResponseFraming()

    init(client: any Channel) { self.client = client }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        _ = framing.consume(buffer)
        client.write(buffer, promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) { client.flush() }

    func channelInactive(context: ChannelHandlerContext) { client.close(promise: nil) }
}

final class ByteClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let upstream = UpstreamSlot<ByteBuffer>()
    private var pending: ByteBuffer?
    private var configure: @Sendable (any Channel) throws -> Void = { _ in }

    func handlerAdded(context: ChannelHandlerContext) {
        let client = context.channel
        configure = { channel in try channel.pipeline.syncOperations.addHandler(ByteUpstreamHandler(client: client)) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if var head = pending {
            head.writeBuffer(&bytes)
            bytes = head
            pending = nil
        }
        while let end = HeadScan.endOfHead(in: bytes) {
            guard let request = Self.originForm(bytes.getSlice(at: bytes.readerIndex, length: end)!, allocator: context.channel.allocator) else {
                context.close(promise: nil)
                return
            }
            bytes.moveReaderIndex(forwardBy: end)
            upstream.send(request.head, flush: false, context: context, host: request.host, port: request.port, configure: configure)
        }
        if bytes.readableBytes > 0 { pending = bytes }
    }

    func channelReadComplete(context: ChannelHandlerContext) { upstream.flush() }

    func channelInactive(context: ChannelHandlerContext) { upstream.close() }

    /// `GET http://host:port/path HTTP/1.1\r\n...` → the same head with `/path`, and where to connect.
    static func originForm(_ head: ByteBuffer, allocator: ByteBufferAllocator) -> (head: ByteBuffer, host: String, port: Int)? {
        head.withUnsafeReadableBytes { raw -> (head: ByteBuffer, host: String, port: Int)? in
            guard let space = raw.firstIndex(of: 32) else { return nil }
            let scheme = Array("http://".utf8)
            let targetStart = space + 1
            guard raw.count > targetStart + scheme.count,
                  raw[targetStart..<(targetStart + scheme.count)].elementsEqual(scheme) else { return nil }
            let authorityStart = targetStart + scheme.count
            var cursor = authorityStart
            while cursor < raw.count, raw[cursor] != 47, raw[cursor] != 32 { cursor += 1 }
            let authority = raw[authorityStart..<cursor]
            var host = String(decoding: authority, as: UTF8.self)
            var port = 80
            if let colon = authority.lastIndex(of: 58) {
                host = String(decoding: raw[authorityStart..<colon], as: UTF8.self)
                port = 0
                for digit in raw[(colon + 1)..<cursor] { port = port * 10 + Int(digit - 48) }
            }
            var out = allocator.buffer(capacity: raw.count)
            out.writeBytes(UnsafeRawBufferPointer(rebasing: raw[..<targetStart]))
            if raw[cursor] == 32 { out.writeInteger(UInt8(47)) }
            out.writeBytes(UnsafeRawBufferPointer(rebasing: raw[cursor...]))
            return (out, host, port)
        }
    }
}

try serveFloor(name: "NIOByteFloor", defaultPort: 8091) { channel in
    try channel.pipeline.syncOperations.addHandler(ByteClientHandler())
}
