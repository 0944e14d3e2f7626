import GatewayConfig
import GatewayCore
import Logging
import NIOConcurrencyHelpers
import NIOHTTP1
import OTel
import Tracing

@testable import GatewayTracing

/// swift-otel's tracer as the gateway configures it, its export never run:
/// spans start and end, nothing leaves the test.
enum TracingTestSupport {
    /// Kept, as the gateway keeps its own (`GatewayTracer`): a freed exporter shuts its HTTP client down synchronously.
    private static let keptAlive = NIOLockedValueBox<[any Tracer]>([])

    static func tracer(_ configure: (inout TracingConfig) -> Void = { _ in }) throws -> any Tracer {
        var tracing = TracingConfig(enabled: true, endpoint: "http://127.0.0.1:9/v1/traces")
        configure(&tracing)
        let backend = try OTel.makeTracingBackend(configuration: tracing.otelConfiguration(diagnostics: Logger(label: "swift-otel-test")))
        let tracer: any Tracer = backend.factory
        keptAlive.withLockedValue { $0.append(tracer) }
        return tracer
    }

    static func context() -> RequestContext {
        RequestContext(id: "t-1", clientAddress: "127.0.0.1:50000", logger: Logger(label: "test"))
    }

    static func request(_ headers: [(String, String)] = []) -> ProxyRequest {
        ProxyRequest(method: .GET, scheme: .http, host: "api.test", port: 80, target: "/users/7", headers: HTTPHeaders(headers), upstreamName: "api")
    }
}
