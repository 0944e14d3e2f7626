import GatewayConfig
import GatewayCore
import GatewaySharedState

/// `/readyz` with `shared_state`: `"shared_state": "available"` or
/// `"unavailable"` with the reason. Not ready (503) only while the database is
/// unavailable with `on_unavailable: fail` (requests that need it are refused);
/// with `local` the gateway is ready, degraded to local behaviour.
struct SharedStateReadiness: Sendable {
    let health: SharedStateHealth
    let config: PostgresStateConfig

    func readiness() -> (status: Int, contentType: String, body: [UInt8]) {
        let status = health.current
        let available = status.isUsable
        let ready = available || config.onUnavailable == .local
        var body = "{\"status\":\"\(ready ? "ready" : "not_ready")\",\"shared_state\":\"\(available ? "available" : "unavailable")\""
        if !available, let reason = status.lastError {
            body += ",\"shared_state_error\":\(JSONString.quote(reason))"
        }
        body += ",\"on_unavailable\":\"\(config.onUnavailable.rawValue)\"}\n"
        return (ready ? 200 : 503, "application/json", Array(body.utf8))
    }

}
