import GatewayCore
import NIOHTTP1

extension ProxyRequest {
    /// The request head sent upstream: HTTP/1.1, origin-form target, the request's
    /// end-to-end headers (hop-by-hop ones removed again, defensively), `Host` first
    /// when absent, and framing set from the body: `Content-Length` when its length
    /// is known, else `Transfer-Encoding: chunked`.
    func upstreamRequestHead() -> HTTPRequestHead {
        var endToEnd = headers
        HopByHopHeaders.removeAll(from: &endToEnd)
        let hadContentLength = headers.contains(name: "content-length")

        var upstreamHeaders = HTTPHeaders()
        upstreamHeaders.reserveCapacity(endToEnd.count + 2)
        if !endToEnd.contains(name: "host") {
            upstreamHeaders.add(name: "Host", value: authority)
        }
        for (name, value) in endToEnd {
            if HopByHopHeaders.equalsIgnoringCase(name, "content-length") { continue }
            upstreamHeaders.add(name: name, value: value)
        }

        switch bodyLength {
        case .some(0):
            // Methods that define a meaning for content get `Content-Length: 0` when empty (RFC 9110 §8.6).
            if hadContentLength || method == .POST || method == .PUT || method == .PATCH {
                upstreamHeaders.add(name: "Content-Length", value: "0")
            }
        case .some(let length):
            upstreamHeaders.add(name: "Content-Length", value: String(length))
        case .none:
            upstreamHeaders.add(name: "Transfer-Encoding", value: "chunked")
        }
        return HTTPRequestHead(version: .http1_1, method: method, uri: target, headers: upstreamHeaders)
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
