import GatewayConfig
import GatewayCore
import GatewayPolicies
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// What a scripted upstream does on one attempt.
enum Step: Sendable {
    case status(Int, headers: [(String, String)] = [])
    case fail(GatewayError.Code)
    /// Never answers (until cancelled).
    case hang
}

/// A fake upstream (terminal handler): plays `steps` in order (the last one
/// repeats), reads each attempt's request body fully and records it.
final class ScriptedUpstream: ProxyHandler, Sendable {
    private struct State {
        var steps: [Step]
        var calls = 0
        var bodies: [[UInt8]] = []
        var methods: [String] = []
    }

    private let state: NIOLockedValueBox<State>

    init(_ steps: [Step]) {
        state = NIOLockedValueBox(State(steps: steps))
    }

    var calls: Int { state.withLockedValue { $0.calls } }
    var bodies: [[UInt8]] { state.withLockedValue { $0.bodies } }

    func handle(_ request: ProxyRequest, context: RequestContext) async throws -> ProxyResponse {
        let step = state.withLockedValue { s -> Step in
            let step = s.steps[Swift.min(s.calls, s.steps.count - 1)]
            s.calls += 1
            return step
        }
        var body: [UInt8] = []
        try await request.body.forEachChunk { chunk in body += chunk.readableBytesView }
        state.withLockedValue { $0.bodies.append(body); $0.methods.append(request.method.rawValue) }
        switch step {
        case .status(let code, let headers):
            var fields = HTTPHeaders(headers)
            fields.add(name: "Content-Length", value: "2")
            return ProxyResponse(status: .init(statusCode: code), headers: fields, body: .bytes(ByteBuffer(string: "ok")))
        case .fail(let code):
            throw GatewayError(code, "scripted failure", upstream: "test")
        case .hang:
            try await Task.sleep(for: .seconds(3600))
            throw CancellationError()
        }
    }
}

/// A request body streamed in the given chunks; counts chunks handed out.
final class ChunkedSource: BodySource, Sendable {
    private let state: NIOLockedValueBox<(chunks: [ByteBuffer], served: Int, cancelled: Bool)>

    init(_ chunks: [[UInt8]]) {
        state = NIOLockedValueBox((chunks.map { ByteBuffer(bytes: $0) }, 0, false))
    }

    var served: Int { state.withLockedValue { $0.served } }
    var cancelled: Bool { state.withLockedValue { $0.cancelled } }

    func next() async throws -> ByteBuffer? {
        state.withLockedValue { s in
            guard s.served < s.chunks.count else { return nil }
            defer { s.served += 1 }
            return s.chunks[s.served]
        }
    }

    func cancel() {
        state.withLockedValue { $0.cancelled = true }
    }
}

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
        ProxyRequest(method: method, scheme: .http, host: "api.example.com", port: 80, target: path, headers: headers, body: body, upstreamName: upstream)
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

extension RetryPolicy {
    func run(_ request: ProxyRequest, upstream: ScriptedUpstream) async throws -> ProxyResponse {
        try await handle(request, context: .test(), next: upstream)
    }
}
