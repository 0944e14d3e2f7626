public import GatewayConfig
public import GatewayCore

/// The path template naming a request's endpoint: its upstream's configured
/// `endpoints` first, then automatic normalization (numeric, UUID, hex and
/// token-like segments as `{id}`). Metrics label their series with it (within
/// the registry's bounds); the tracing spans name themselves with it
/// (`GET /users/{id}`, `http.route`). Built once per config load; works on
/// the target's bytes, as it runs for every request.
public struct EndpointTemplates: Sendable {
    private let byUpstream: [String: [CompiledTemplate]]

    public init(config: GatewayConfig) {
        var byUpstream: [String: [CompiledTemplate]] = [:]
        for upstream in config.upstreams where !upstream.endpoints.isEmpty && byUpstream[upstream.name] == nil {
            byUpstream[upstream.name] = upstream.endpoints.map(CompiledTemplate.init)
        }
        self.byUpstream = byUpstream
    }

    /// `request`'s template, and whether it is a configured one.
    public func endpoint(of request: ProxyRequest) -> (path: String, configured: Bool) {
        let upstream = request.upstreamName
        var target = request.target
        return target.withUTF8 { bytes -> (String, Bool) in
            let path = PathNormalizer.pathPart(of: bytes)
            if let upstream, let candidates = byUpstream[upstream] {
                let methodName = request.method.rawValue
                for candidate in candidates where candidate.matches(method: methodName, path: path) {
                    return (candidate.path, true)
                }
            }
            return (PathNormalizer.normalize(path: path), false)
        }
    }
}
