import GatewayConfig
import GatewayCore
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

@testable import GatewayTracing

/// The exporter's requests as the upstream pool gets them, and how it reads
/// the answers, without sockets: OTLP/HTTP is a POST to the endpoint's path
/// taken on 2xx; OTLP/gRPC is one framed message on HTTP/2 taken on
/// `grpc-status: 0`. `tracing.tls` goes with both to an `https` collector.
@Suite struct OTLPExporterTests {
    /// Answers every export as `answer` says, and keeps the requests.
    final class ScriptedCollector: UpstreamTransport {
        let answer: @Sendable (any UpstreamAttemptDelegate) -> Void
        let requests = NIOLockedValueBox<[ProxyRequest]>([])

        init(_ answer: @escaping @Sendable (any UpstreamAttemptDelegate) -> Void) { self.answer = answer }

        func startAttempt(
            _ request: ProxyRequest, record: ExchangeRecord, on eventLoop: any EventLoop, delegate: any UpstreamAttemptDelegate
        ) -> UpstreamAttemptCancellation {
            requests.withLockedValue { $0.append(request) }
            answer(delegate)
            return .nothingToCancel
        }
    }

    static let tls = UpstreamTLSSettings(caFile: "/etc/otel/ca.pem")
    static let message = ByteBuffer(bytes: [0x0A, 0x03, 0x01, 0x02, 0x03])

    func export(
        _ endpoint: String, _ exportProtocol: TracingConfig.ExportProtocol, collector: ScriptedCollector
    ) async throws -> Result<Void, any Error> {
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let exporter = OTLPExporter(
            endpoint: try #require(OTLPEndpoint(endpoint)), exportProtocol: exportProtocol, headers: [("X-API-Key", "k-1")],
            tls: Self.tls, transport: collector, eventLoop: eventLoop)
        do {
            try await eventLoop.flatSubmit { exporter.send(Self.message) }.get()
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    static func answer(_ status: HTTPResponseStatus, headers: HTTPHeaders = [:], trailers: HTTPHeaders? = nil) -> ScriptedCollector {
        ScriptedCollector { delegate in
            delegate.upstreamResponseHead(UpstreamResponseHead(status: status, headers: headers, declaredLength: nil, hasBody: true))
            if let trailers { delegate.upstreamResponseTrailers(trailers) } else { delegate.upstreamResponseEnd() }
        }
    }

    @Test func httpProtobufPostsTheMessageToTheEndpointsPathAndTakesA2xx() async throws {
        let collector = Self.answer(.accepted)
        let result = try await export("https://collector.test:4318/v1/traces?tenant=a", .httpProtobuf, collector: collector)
        #expect(throws: Never.self) { try result.get() }
        let request = try #require(collector.requests.withLockedValue { $0.first })
        #expect(request.method == .POST && request.scheme == .https && request.host == "collector.test" && request.port == 4318)
        #expect(request.target == "/v1/traces?tenant=a")
        #expect(request.upstreamHTTPVersion == .auto, "h2 or HTTP/1.1, as ALPN settles")
        #expect(request.headers.first(name: "Content-Type") == "application/x-protobuf")
        #expect(request.headers.first(name: "X-API-Key") == "k-1")
        #expect(request.tls == Self.tls, "tracing.tls applies to OTLP/HTTP too")
        guard case .bytes(let body) = request.body.storage else { Issue.record("not a buffered body"); return }
        #expect(body == Self.message)
    }

    @Test func httpProtobufFailsOnAnyOtherStatus() async throws {
        let result = try await export("http://127.0.0.1:4318/v1/traces", .httpProtobuf, collector: Self.answer(.serviceUnavailable))
        #expect(throws: OTLPExporter.Failure.self) { try result.get() }
        if case .failure(let error) = result { #expect("\(error)".contains("HTTP 503")) }
    }

    @Test func grpcFramesTheMessageAndReadsGRPCStatusFromTheTrailers() async throws {
        let grpc: HTTPHeaders = ["content-type": "application/grpc"]
        let collector = Self.answer(.ok, headers: grpc, trailers: ["grpc-status": "0"])
        let result = try await export("https://collector.test:4317", .grpc, collector: collector)
        #expect(throws: Never.self) { try result.get() }
        let request = try #require(collector.requests.withLockedValue { $0.first })
        #expect(request.target == OTLPExporter.grpcPath && request.upstreamHTTPVersion == .http2)
        #expect(request.headers.first(name: "content-type") == "application/grpc+proto")
        #expect(request.headers.first(name: "grpc-timeout") == "10000m")
        #expect(request.headers.first(name: "x-api-key") == "k-1")
        #expect(request.tls == Self.tls)
        guard case .bytes(let body) = request.body.storage else { Issue.record("not a buffered body"); return }
        #expect(Array(body.readableBytesView) == [0, 0, 0, 0, 5] + Array(Self.message.readableBytesView))

        let refused = try await export(
            "http://127.0.0.1:4317", .grpc, collector: Self.answer(.ok, headers: grpc, trailers: ["grpc-status": "14", "grpc-message": "down"]))
        if case .failure(let error) = refused { #expect("\(error)" == "the collector answered grpc-status 14: down") } else { Issue.record("taken") }
        let trailersOnly = try await export("http://127.0.0.1:4317", .grpc, collector: Self.answer(.ok, headers: ["grpc-status": "0"]))
        #expect(throws: Never.self) { try trailersOnly.get() }
    }

    @Test func aPlainHTTPCollectorGetsNoTLSSettings() async throws {
        let collector = Self.answer(.ok)
        _ = try await export("http://127.0.0.1:4318/v1/traces", .httpProtobuf, collector: collector)
        #expect(collector.requests.withLockedValue { $0.first?.tls } == .standard)
    }
}
