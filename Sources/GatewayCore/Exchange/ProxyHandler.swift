/// Something that turns a client request into a response: the policy chain, the
/// upstream pool, or a test double. The listener calls one of these per request.
public protocol ProxyHandler: Sendable {
    func handle(_ request: ProxyRequest, context: RequestContext) async throws -> ProxyResponse
}

/// One step of the policy chain (as Hummingbird's middleware): it may change the
/// request, call `next` zero or more times, and change the response.
/// A policy that does not apply to a request passes it on untouched.
public protocol GatewayPolicy: Sendable {
    func handle(_ request: ProxyRequest, context: RequestContext, next: any ProxyHandler) async throws -> ProxyResponse
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
