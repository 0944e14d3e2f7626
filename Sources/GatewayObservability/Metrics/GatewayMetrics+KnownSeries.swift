public import GatewayConfig
import GatewayCore
import NIOHTTP1

/// Series whose label sets a config fixes start at 0, so that a dashboard
/// panel or an alert on them reads 0 before the first event, not "No data"
/// (and `rate()`/`increase()` see the first event as an increase from 0).
extension GatewayMetrics {
    /// Makes, at 0, for each upstream of `config` (at every load: a reload's
    /// new upstreams get theirs; series already there keep their values):
    /// - `gateway_retries_total{reason}` for every reason its `retry.on` can give;
    /// - `gateway_rate_limited_total{source}` with `rate_limit` (`upstream`; `local` with a local rate)
    ///   and `gateway_queued_requests`;
    /// - `gateway_token_refreshes_total{trigger,result}` with OAuth2 (`shared` results with `shared_state`);
    /// - `gateway_pin_failures_total{mode}` with pins;
    /// - every configured endpoint template that names its method: its
    ///   `gateway_requests_total` (every status class) and `gateway_request_duration_seconds`.
    /// Endpoints met later start every status class at 0 too (``EndpointRecorder``).
    public func startKnownSeries(of config: GatewayConfig) {
        for upstream in config.upstreams {
            let label = upstreamLabel(upstream.name)
            for reason in Self.retryReasons(upstream.retry) {
                _ = retries.get([label, reason])
            }
            if let rateLimit = upstream.rateLimit {
                _ = rateLimitedRequests.get([label, "upstream"])
                if rateLimit.requestsPerSecond != nil { _ = rateLimitedRequests.get([label, "local"]) }
                _ = queued.get([label])
            }
            if case .oauth2? = upstream.auth?.kind {
                let results = config.sharedState == nil ? ["success", "failure"] : ["success", "failure", "shared"]
                for trigger in Self.tokenRefreshTriggers {
                    for result in results { _ = tokenRefreshes.get([label, trigger, result]) }
                }
            }
            if !upstream.tls.pins.isEmpty {
                _ = pinFailures.get([label, upstream.tls.pinMode.rawValue])
            }
            for template in upstream.endpoints {
                guard let method = template.method else { continue }
                let methodLabel = EndpointKey.methodLabel(HTTPMethod(rawValue: method))
                _ = endpoint(upstream: upstream.name, method: methodLabel, endpoint: template.path, configured: true, maxEndpoints: 0)
            }
        }
    }

    /// The `trigger` labels of token refreshes (`TokenStore.Trigger`'s raw values).
    static let tokenRefreshTriggers = ["first_use", "expiry", "401"]

    /// The `reason` labels the retry planner reports for `retry.on`: a
    /// failure's `GatewayError.Code` (as `RetryDecision.matches` maps them),
    /// `status_NNN` for a status. None without `retry`.
    static func retryReasons(_ retry: RetryConfig?) -> [String] {
        guard let retry else { return [] }
        var reasons: [String] = []
        for condition in retry.on.sorted() {
            let codes: [GatewayError.Code]
            switch condition {
            case .connectFailure: codes = [.connectFailed, .dnsFailure, .connectTimeout]
            case .reset: codes = [.connectionReset]
            case .timeout: codes = [.requestTimeout, .connectTimeout]
            case .status(let status):
                reasons.append("status_\(status)")
                continue
            }
            for code in codes where !reasons.contains(code.rawValue) { reasons.append(code.rawValue) }
        }
        return reasons
    }
}
