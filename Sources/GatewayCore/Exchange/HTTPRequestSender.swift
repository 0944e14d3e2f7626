/// Sends one request and returns its response, awaited: the upstream pool, for
/// the OAuth2 token endpoint's calls, or a test double. Client requests take the
/// event loop's path instead (``UpstreamTransport``).
public protocol HTTPRequestSender: Sendable {
    func handle(_ request: ProxyRequest, context: RequestContext) async throws -> ProxyResponse
}

/// A sender built from a closure.
public struct ClosureRequestSender: HTTPRequestSender {
    private let body: @Sendable (ProxyRequest, RequestContext) async throws -> ProxyResponse

    public init(_ body: @escaping @Sendable (ProxyRequest, RequestContext) async throws -> ProxyResponse) {
        self.body = body
    }

    public func handle(_ request: ProxyRequest, context: RequestContext) async throws -> ProxyResponse {
        try await body(request, context)
    }
}
