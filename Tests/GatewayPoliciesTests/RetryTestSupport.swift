import GatewayTesting
import GatewayConfig
import GatewayCore
import GatewayPolicies
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Records the retry and rate-limit events.
final class RecordingEvents: GatewayEvents {
    private let state = NIOLockedValueBox((retries: [String](), rateLimited: [String](), depths: [Int]()))

    var retries: [String] { state.withLockedValue { $0.retries } }
    var rateLimited: [String] { state.withLockedValue { $0.rateLimited } }
    var depths: [Int] { state.withLockedValue { $0.depths } }

    func retry(upstream: String, reason: String) { state.withLockedValue { $0.retries.append(reason) } }
    func rateLimited(upstream: String, source: String) { state.withLockedValue { $0.rateLimited.append(source) } }
    func queueDepth(upstream: String, depth: Int) { state.withLockedValue { $0.depths.append(depth) } }
}

extension ProxyRequest {
    static func test(_ method: HTTPMethod = .GET, path: String = "/x", headers: HTTPHeaders = [:], body: ProxyBody = .empty, upstream: String? = "api") -> ProxyRequest {
        ProxyRequest(method: method, scheme: .http, host: "api.example.com", port: 80, target: path, headers: RequestFields.lines(headers), body: body, upstreamName: upstream)
    }
}

extension RequestContext {
    static func test() -> RequestContext {
        RequestContext(id: "t", clientAddress: "127.0.0.1:1", logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    }
}

func upstreamConfig(_ name: String = "api", retry: RetryConfig? = nil, rateLimit: RateLimitConfig? = nil) -> UpstreamConfig {
    UpstreamConfig(name: name, hosts: [HostPattern("api.example.com")!], retry: retry, rateLimit: rateLimit)
}

/// Retries without waiting: zero backoff.
func quickRetry(attempts: Int = 3, on: Set<RetryCondition> = RetryConfig.defaultOn, bufferLimit: Int = 1024, budgetMinPerSecond: Double = 1000) -> RetryConfig {
    RetryConfig(attempts: attempts, backoffBase: .zero, backoffMax: .zero, on: on, budgetMinPerSecond: budgetMinPerSecond, bufferLimit: bufferLimit)
}
