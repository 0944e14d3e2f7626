import NIOCore
import NIOHTTP1
import NIOSSL

/// One connection of a ``TestUpstream``: reads requests one after another (keep-alive) and
/// answers each through the routes in `UpstreamSession+Routes.swift`.
///
/// Not `Sendable`: it lives in its connection's task only.
final class UpstreamSession {
    typealias Inbound = NIOAsyncChannelInboundStream<HTTPServerRequestPart>
    typealias Outbound = NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>

    let channel: any Channel
    let state: TestUpstreamState
    let outbound: Outbound
    private var requestParts: Inbound.AsyncIterator
    /// True once the current request's `.end` was read.
    private var bodyFinished = true

    private init(channel: any Channel, state: TestUpstreamState, inbound: Inbound, outbound: Outbound) {
        self.channel = channel
        self.state = state
        self.outbound = outbound
        self.requestParts = inbound.makeAsyncIterator()
    }

    /// Builds the child pipeline: RST helper, optional TLS, HTTP/1.1 server codec, async wrapper.
    static func configurePipeline(
        _ channel: any Channel,
        tls: NIOSSLContext?
    ) throws -> NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart> {
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(AbruptCloseHandler())
        if let tls {
            try pipeline.addHandler(NIOSSLServerHandler(context: tls))
        }
        try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
        return try NIOAsyncChannel(
            wrappingChannelSynchronously: channel,
            configuration: .init(backPressureStrategy: .init(lowWatermark: 2, highWatermark: 8))
        )
    }

    /// Serves one connection until the client closes it, asks to close it, or a route ends it.
    static func serve(
        _ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>,
        state: TestUpstreamState
    ) async {
        do {
            try await connection.executeThenClose { inbound, outbound in
                let session = UpstreamSession(channel: connection.channel, state: state, inbound: inbound, outbound: outbound)
                try await session.run()
            }
        } catch {
            // Resets, TLS failures and clients going away are normal in tests.
        }
    }

    private func run() async throws {
        while let part = try await self.requestParts.next() {
            guard case .head(let head) = part else {
                // Only possible after a route stopped reading mid-body; skip the rest.
                continue
            }
            self.bodyFinished = false
            self.state.countRequest()
            if Self.expectsContinue(head) {
                try await self.write(.head(HTTPResponseHead(version: head.version, status: .continue)))
            }
            let keepOpen = try await self.route(head)
            guard keepOpen, head.isKeepAlive else { return }
            try await self.drainBody()
        }
    }

    private static func expectsContinue(_ head: HTTPRequestHead) -> Bool {
        head.headers["expect"].contains { $0.lowercased().contains("100-continue") }
    }

    // MARK: Request body

    /// The next chunk of the current request's body, nil at its end.
    func nextBodyChunk() async throws -> ByteBuffer? {
        guard !self.bodyFinished else { return nil }
        guard let part = try await self.requestParts.next() else {
            self.bodyFinished = true
            throw TestUpstreamError.connectionClosedMidRequest
        }
        switch part {
        case .body(let chunk):
            return chunk
        case .end:
            self.bodyFinished = true
            return nil
        case .head:
            self.bodyFinished = true
            throw TestUpstreamError.unexpectedRequestPart
        }
    }

    /// Reads and discards the rest of the current request's body.
    func drainBody() async throws {
        while try await self.nextBodyChunk() != nil {}
    }

    /// Reads the whole body; past `limit` bytes it keeps draining and returns nil.
    func collectBody(limit: Int) async throws -> [UInt8]? {
        var body: [UInt8] = []
        var overflow = false
        while let chunk = try await self.nextBodyChunk() {
            if overflow { continue }
            if body.count + chunk.readableBytes > limit {
                overflow = true
                body = []
            } else {
                body.append(contentsOf: chunk.readableBytesView)
            }
        }
        return overflow ? nil : body
    }

    // MARK: Responses

    /// Writes a complete response with a `Content-Length` (omitted where the status forbids a body).
    func respond(
        to head: HTTPRequestHead,
        status: HTTPResponseStatus,
        headers: [(String, String)] = [],
        body: [UInt8] = []
    ) async throws {
        var responseHeaders = HTTPHeaders(headers)
        let bodyAllowed = Self.statusAllowsBody(status.code)
        let hasFraming = responseHeaders.contains(name: "content-length")
            || responseHeaders.contains(name: "transfer-encoding")
        if bodyAllowed, !hasFraming {
            responseHeaders.add(name: "Content-Length", value: String(body.count))
        }
        var responseHead = HTTPResponseHead(version: head.version, status: status, headers: responseHeaders)
        if !head.isKeepAlive {
            responseHead.headers.replaceOrAdd(name: "Connection", value: "close")
        }
        self.channel.write(HTTPServerResponsePart.head(responseHead), promise: nil)
        if bodyAllowed, head.method != .HEAD, !body.isEmpty {
            self.channel.write(HTTPServerResponsePart.body(.byteBuffer(self.channel.allocator.buffer(bytes: body))), promise: nil)
        }
        try await self.write(.end(nil))
    }

    /// Writes and flushes `part` straight to the channel and waits until it reached the socket.
    ///
    /// Writes issued earlier through ``outbound`` are ordered before it (both hop to the event
    /// loop in order), so awaiting the response's `.end` this way guarantees that the whole
    /// response was written before the connection may be closed.
    func write(_ part: HTTPServerResponsePart) async throws {
        try await self.channel.writeAndFlush(part)
    }

    /// Writes a response head, adding `Connection: close` if the request asked for it.
    func writeHead(to head: HTTPRequestHead, status: HTTPResponseStatus, headers: HTTPHeaders) async throws {
        var responseHead = HTTPResponseHead(version: head.version, status: status, headers: headers)
        if !head.isKeepAlive {
            responseHead.headers.replaceOrAdd(name: "Connection", value: "close")
        }
        try await self.write(.head(responseHead))
    }

    static func statusAllowsBody(_ code: UInt) -> Bool {
        !(100..<200).contains(code) && code != 204 && code != 304
    }
}
