import GatewayConfig
import GatewayCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
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
            config: tracing, eventLoop: MultiThreadedEventLoopGroup.singleton.next(), logger: Logger(label: "tracing-test"), dropped: { _, _ in },
            transport: NoTransport()
        )
    }

    static func context() -> RequestContext {
        RequestContext(id: "t-1", clientAddress: "127.0.0.1:50000", logger: Logger(label: "test"))
    }

    static func request(_ headers: [(String, String)] = []) -> ProxyRequest {
        ProxyRequest(method: .GET, scheme: .http, host: "api.test", port: 80, target: "/users/7", headers: RequestFields(headers), upstreamName: "api")
    }
}

/// The tracer's transport in these tests, which send nothing: an attempt fails at once.
final class NoTransport: UpstreamTransport {
    func startAttempt(
        _ request: ProxyRequest, record: ExchangeRecord, on eventLoop: any EventLoop, delegate: any UpstreamAttemptDelegate
    ) -> UpstreamAttemptCancellation {
        delegate.upstreamAttemptFailed(GatewayError(.connectFailed, "the tracing unit tests send nothing"))
        return .nothingToCancel
    }
}
