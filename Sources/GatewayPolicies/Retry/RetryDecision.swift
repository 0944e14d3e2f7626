public import GatewayConfig
public import GatewayCore
public import NIOHTTP1

/// Whether one attempt's outcome is worth another attempt, and why: a pure
/// function of the outcome and the upstream's `retry.on` conditions.
public enum RetryDecision: Sendable, Equatable {
    /// Hand the outcome to the client as it is.
    case final
    /// Try again. `reason` is the metric label (`connect_failed`, `status_503`, ...);
    /// `retryAfter` is the upstream's `Retry-After` wait when it sent one and it is honored.
    case retry(reason: String, retryAfter: Duration?)

    /// - Parameters:
    ///   - on: the configured `retry.on` conditions.
    ///   - honorRetryAfter: use a 429/503's `Retry-After` as the wait instead of the backoff.
    public static func evaluate(
        _ outcome: Result<ProxyResponse, any Error>,
        on conditions: Set<RetryCondition>,
        honorRetryAfter: Bool,
        secondsSince1970: Double
    ) -> RetryDecision {
        switch outcome {
        case .failure(let error):
            guard let error = error as? GatewayError else { return .final }
            return evaluate(error, on: conditions)
        case .success(let response):
            return evaluate(status: response.status, headers: response.headers, on: conditions, honorRetryAfter: honorRetryAfter, secondsSince1970: secondsSince1970)
        }
    }

    /// An attempt that failed before its response head.
    public static func evaluate(_ error: GatewayError, on conditions: Set<RetryCondition>) -> RetryDecision {
        guard matches(error.code, conditions) else { return .final }
        return .retry(reason: error.code.rawValue, retryAfter: nil)
    }

    /// An attempt that got a response head.
    public static func evaluate(
        status: HTTPResponseStatus,
        headers: HTTPHeaders,
        on conditions: Set<RetryCondition>,
        honorRetryAfter: Bool,
        secondsSince1970: Double
    ) -> RetryDecision {
        let code = Int(status.code)
        // A response the gateway made itself (e.g. its own 429) is never retried.
        guard conditions.contains(.status(code)), !headers.contains(name: "x-gateway-error") else {
            return .final
        }
        var retryAfter: Duration?
        if honorRetryAfter, code == 429 || code == 503, let value = headers.first(name: "retry-after") {
            retryAfter = RetryAfter.parse(value, secondsSince1970: secondsSince1970)
        }
        return .retry(reason: "status_\(code)", retryAfter: retryAfter)
    }

    /// Which error codes each condition covers. Only failures where the request
    /// may not have been processed, or a new connection may succeed, qualify;
    /// TLS, certificate and pin failures never do.
    static func matches(_ code: GatewayError.Code, _ conditions: Set<RetryCondition>) -> Bool {
        switch code {
        case .connectFailed, .dnsFailure: conditions.contains(.connectFailure)
        case .connectTimeout: conditions.contains(.connectFailure) || conditions.contains(.timeout)
        case .connectionReset: conditions.contains(.reset)
        case .requestTimeout: conditions.contains(.timeout)
        default: false
        }
    }
}
