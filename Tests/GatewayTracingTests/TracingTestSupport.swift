import GatewayConfig
import GatewayCore
import Logging
import NIOConcurrencyHelpers
import NIOHTTP1
import NIOPosix

@testable import GatewayTracing

/// The gateway's tracer as it configures it, its export never scheduled:
/// ids are given, spans are made and queued, nothing leaves the test.
enum TracingTestSupport {
    static func tracer(_ configure: (inout TracingConfig) -> Void = { _ in }) throws -> GatewayTracer {
        var tracing = TracingConfig(enabled: true, endpoint: "http://127.0.0.1:9/v1/traces")
        configure(&tracing)
        return try GatewayTracer(
            config: tracing, eventLoop: MultiThreadedEventLoopGroup.singleton.next(), logger: Logger(label: "tracing-test"), dropped: { _, _ in }
        )
    }

    static func context() -> RequestContext {
        RequestContext(id: "t-1", clientAddress: "127.0.0.1:50000", logger: Logger(label: "test"))
    }

    static func request(_ headers: [(String, String)] = []) -> ProxyRequest {
        ProxyRequest(method: .GET, scheme: .http, host: "api.test", port: 80, target: "/users/7", headers: RequestFields(headers), upstreamName: "api")
    }
}
