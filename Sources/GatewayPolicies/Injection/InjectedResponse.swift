public import GatewayConfig
public import GatewayCore
public import NIOCore
public import NIOHTTP1

/// A response the gateway makes in the upstream's place (a mock, a replayed
/// entry, an injected error): status, fields and a whole body, with the mark
/// the client sees (`X-Gateway-Injected`).
public struct InjectedResponse: Sendable {
    public var status: HTTPResponseStatus
    public var headers: HTTPHeaders
    public var body: ByteBuffer
    /// How long it waits before its head goes (a mock's `delay`, a replay's recorded time).
    public var delay: Duration?

    public init(status: Int, headers: HTTPHeaders, body: ByteBuffer, mark: Injection, delay: Duration? = nil) {
        self.status = HTTPResponseStatus(statusCode: status)
        var headers = headers
        headers.replaceOrAdd(name: "X-Gateway-Injected", value: mark.description)
        self.headers = headers
        self.body = body
        self.delay = delay
    }

    /// As a gateway answer (``AttemptStepDecision/respond(_:)``).
    public var proxyResponse: ProxyResponse {
        ProxyResponse(status: status, headers: headers, body: body.readableBytes == 0 ? .empty : .bytes(body))
    }

    /// Plays the response into an attempt's delegate as an upstream connection would.
    func play(to delegate: any UpstreamAttemptDelegate, method: HTTPMethod) {
        let code = status.code
        let hasBody = method != .HEAD && code != 204 && code != 304 && !(100..<200).contains(code) && body.readableBytes > 0
        delegate.upstreamResponseHead(UpstreamResponseHead(
            status: status, headers: headers, declaredLength: method == .HEAD ? nil : body.readableBytes, hasBody: hasBody
        ))
        if hasBody {
            delegate.upstreamResponseBodyPart(body)
            delegate.upstreamReadComplete()
        }
        delegate.upstreamResponseEnd()
    }
}

extension FaultResponse {
    /// The fault's response: its status, `Retry-After` in whole seconds, its
    /// fields, and its body or a small JSON one naming the fault.
    public func injected(toward: FaultTarget) -> InjectedResponse {
        var headers = HTTPHeaders()
        for header in self.headers { headers.add(name: header.name, value: header.value) }
        if let retryAfter {
            let seconds = retryAfter.components.seconds + (retryAfter.components.attoseconds > 0 ? 1 : 0)
            headers.replaceOrAdd(name: "Retry-After", value: String(seconds))
        }
        let text: String
        if let body {
            text = body
        } else {
            text = "{\"error\":\"injected_fault\",\"status\":\(status)}\n"
            if !headers.contains(name: "Content-Type") { headers.add(name: "Content-Type", value: "application/json") }
        }
        return InjectedResponse(
            status: status, headers: headers, body: ByteBuffer(string: text),
            mark: Injection(source: .fault, kind: "error", toward: toward.rawValue)
        )
    }
}
