import GatewayListener
import GatewayObservability

/// What the admin port answers: health, readiness, Prometheus metrics, the
/// per-endpoint `/stats` JSON and the page at `/` that shows it.
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
            metrics.setClientConnections(proxy.connectionCount)
            return (200, "text/plain; version=0.0.4; charset=utf-8", metrics.exposition())
        case "/stats":
            return (200, "application/json", metrics.statsReport().json())
        case "/", "/index.html":
            return (200, AdminPage.contentType, AdminPage.bytes)
        default:
            return nil
        }
    }
}
