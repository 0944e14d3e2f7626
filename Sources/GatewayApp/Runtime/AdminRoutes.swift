import GatewayListener
import GatewayObservability

/// What the admin port answers.
struct AdminRoutes: Sendable {
    let metrics: GatewayMetrics
    let proxy: ProxyServer

    func handle(method: String, path: String) async -> (status: Int, contentType: String, body: [UInt8])? {
        switch path {
        case "/healthz":
            return (200, "application/json", Array("{\"status\":\"ok\"}\n".utf8))
        case "/readyz":
            // Ready once the proxy listener is bound.
            return (200, "application/json", Array("{\"status\":\"ready\"}\n".utf8))
        case "/metrics":
            return (200, "text/plain; version=0.0.4; charset=utf-8", metrics.exposition())
        default:
            return nil
        }
    }
}
