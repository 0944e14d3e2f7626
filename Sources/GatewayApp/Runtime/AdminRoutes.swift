import GatewayCore
import GatewayListener
import GatewaySharedState
import GatewayObservability
import Logging

/// What the admin port answers: health, readiness, Prometheus metrics, the
/// per-endpoint `/stats` JSON, the recent traced exchanges (`/traces` JSON,
/// `/traces.har`), mocks, replay and faults (`/injection`, and their switch:
/// `AdminRoutes+Injection.swift`), and the page at `/` that shows them.
struct AdminRoutes: Sendable {
    let metrics: GatewayMetrics
    let proxy: ProxyServer
    /// The records the trace writer kept last (empty unless `debug`).
    let traces: RecentTraces
    let liveConfig: LiveConfig
    /// The shared state's health, when `shared_state` is configured.
    let sharedState: SharedStateReadiness?
    /// Asks the proxy port itself, for `/readyz`.
    let proxyProbe: ProxyReadinessProbe
    /// The runtime switches of mocks, replay and faults.
    let switches: InjectionSwitches
    /// Builds the current config's routes again after a switch.
    let rebuild: @Sendable () throws -> Void
    let logger: Logger

    func handle(_ request: AdminRequest) async -> (status: Int, contentType: String, body: [UInt8])? {
        if request.method == "POST" { return switchInjection(request) }
        switch request.path {
        case "/healthz":
            return (200, "application/json", Array("{\"status\":\"ok\"}\n".utf8))
        case "/readyz":
            return await readiness()
        case "/metrics":
            metrics.setClientConnections(proxy.connectionCount)
            return (200, "text/plain; version=0.0.4; charset=utf-8", metrics.exposition())
        case "/stats":
            return (200, "application/json", metrics.statsReport().json())
        case "/traces":
            return (200, "application/json", traces.reportJSON(debug: liveConfig.current.config.debug))
        case "/traces.har":
            guard let har = try? traces.harJSON() else { return (500, "application/json", Array("{\"error\":\"har_export_failed\"}\n".utf8)) }
            return (200, "application/json", har)
        case "/injection":
            return (200, "application/json", injectionReport().json())
        case "/", "/index.html":
            return (200, AdminPage.contentType, AdminPage.bytes(injected: injectionReport().html))
        default:
            return nil
        }
    }

    /// Ready when the proxy port accepts and answers a request (``ProxyReadinessProbe``:
    /// a listener that resets every connection is not ready, whatever the admin
    /// port says) and, with shared state, when that allows (``SharedStateReadiness``).
    private func readiness() async -> (status: Int, contentType: String, body: [UInt8]) {
        let probe: ProxyReadinessProbe.Result
        if let address = proxy.boundAddress {
            probe = await proxyProbe.check(address)
        } else {
            probe = .notReady("the proxy port is not bound")
        }
        guard case .notReady(let reason) = probe else {
            return sharedState?.readiness() ?? (200, "application/json", Array("{\"status\":\"ready\"}\n".utf8))
        }
        let body = "{\"status\":\"not_ready\",\"proxy\":\"not_answering\",\"proxy_error\":\(JSONString.quote(reason))}\n"
        return (503, "application/json", Array(body.utf8))
    }
}
