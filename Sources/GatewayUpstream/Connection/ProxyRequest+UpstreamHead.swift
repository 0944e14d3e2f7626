import GatewayCore
import NIOCore
import NIOHTTP1

extension ProxyRequest {
    /// The request head sent upstream, serialized: HTTP/1.1, origin-form target,
    /// `Host` first when absent, the request's end-to-end fields in their order
    /// (hop-by-hop ones removed again, defensively; the client's lines copied as
    /// they were read, added fields checked; a WebSocket handshake's
    /// `Connection: Upgrade` and `Upgrade: websocket` added), and framing set from the
    /// body: `Content-Length` when its length is known, else `Transfer-Encoding: chunked`.
    /// Throws when a field would corrupt the head (a control byte in a value).
    /// `spare`: a buffer to write the head into (see ``HTTP1RequestHead/init(method:target:allocator:spare:)``).
    func upstreamRequestHead(allocator: ByteBufferAllocator = ByteBufferAllocator(), spare: consuming ByteBuffer? = nil) throws(GatewayError) -> HTTP1RequestHead {
        // Hop-by-hop fields were removed when the request was read: this finds none and marks nothing.
        var endToEnd = headers
        HopByHopHeaders.removeAll(from: &endToEnd)
        do throws(HTTP1RequestHead.InvalidField) {
            var head = try HTTP1RequestHead(method: method, target: target, allocator: allocator, spare: consume spare)
            if !endToEnd.contains(name: "host") {
                try head.add(name: "Host", value: authority)
            }
            var invalid: HTTP1RequestHead.InvalidField?
            endToEnd.forEachField { name, value, fromLine in
                guard invalid == nil, !(name.count == 14 && HTTP1HeadLines.equalsIgnoringCase(name, from: 0, to: 14, "content-length")) else { return }
                if fromLine {
                    // Checked by the parser as it read the line.
                    head.addChecked(name: name, value: value)
                } else {
                    do throws(HTTP1RequestHead.InvalidField) { try head.add(name: name, value: value) } catch { invalid = error }
                }
            }
            if let invalid { throw invalid }
            if isWebSocketHandshake {
                // The hop-by-hop fields of the handshake, for this hop (RFC 6455 §4.1).
                try head.add(name: "Connection", value: "Upgrade")
                try head.add(name: "Upgrade", value: "websocket")
            }
            switch bodyLength {
            case .some(0):
                // Methods that define a meaning for content get `Content-Length: 0` when empty (RFC 9110 §8.6).
                if headers.contains(name: "content-length") || method == .POST || method == .PUT || method == .PATCH {
                    try head.add(name: "Content-Length", value: "0")
                }
            case .some(let length):
                try head.add(name: "Content-Length", value: String(length))
            case .none:
                head.addChunkedFraming()
            }
            head.end()
            return head
        } catch {
            // The value is never shown: it may be a credential.
            let field = error.name.map { "the \($0) field" } ?? "a field name or the request target"
            throw GatewayError(
                .internalError,
                "the request for the upstream was not sent: \(field) holds a byte HTTP/1.1 forbids there (a control character, CR or LF)",
                upstream: hostPort
            )
        }
    }

    /// The number of body bytes that will be sent, nil when unknown (streamed without a length).
    var bodyLength: Int? {
        switch body.storage {
        case .empty: return 0
        case .bytes(let buffer): return buffer.readableBytes
        case .stream: return body.declaredLength
        }
    }
}
