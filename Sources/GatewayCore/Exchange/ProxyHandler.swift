/// Something that turns a request into a response, awaited: the upstream pool
/// (for the token endpoint's calls), or a test double. Client requests take
/// the event loop's path instead (``UpstreamTransport``).
public protocol ProxyHandler: Sendable {
    func handle(_ request: ProxyRequest, context: RequestContext) async throws -> ProxyResponse
}

/// A handler built from a closure.
public struct ClosureProxyHandler: ProxyHandler {
    private let body: @Sendable (ProxyRequest, RequestContext) async throws -> ProxyResponse

    public init(_ body: @escaping @Sendable (ProxyRequest, RequestContext) async throws -> ProxyResponse) {
        self.body = body
    }

    public func handle(_ request: ProxyRequest, context: RequestContext) async throws -> ProxyResponse {
        try await body(request, context)
    }
}
