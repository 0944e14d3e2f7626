import GatewayCore
import NIOHTTP1

extension TraceRecord {
    /// The record's endpoint as the metrics name it: `host[:port]` followed by
    /// the path template of ``EndpointTemplates`` (the upstream's configured
    /// `endpoints:` first, then numeric, UUID and hex segments as `{id}`),
    /// e.g. `api.github.com/repos/{id}` for `api.github.com/repos/1296269`.
    /// An endpoint with no path (a `CONNECT` authority) is returned as it is.
    public func endpointTemplate(_ templates: EndpointTemplates) -> String {
        guard let slash = endpoint.firstIndex(of: "/") else { return endpoint }
        let request = ProxyRequest(
            method: HTTPMethod(rawValue: method), scheme: .http, host: String(endpoint[..<slash]), port: 80,
            target: String(endpoint[slash...]), headers: RequestFields(), upstreamName: upstream
        )
        return String(endpoint[..<slash]) + templates.endpoint(of: request).path
    }
}
