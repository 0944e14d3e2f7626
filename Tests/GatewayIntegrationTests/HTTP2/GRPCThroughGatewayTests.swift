import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// gRPC through an intercepted host, with grpcio from PyPI on both ends (generic
/// handlers, no generated code): the client's proxy is the gateway (its CA
/// trusted), the server speaks only HTTP/2 over TLS. Unary and server-streaming
/// calls succeed with their trailers, and the server sees the injected credential.
@Suite(.timeLimit(.minutes(3)))
struct GRPCThroughGatewayTests {
    static let token = Secret(source: .env("GRPC_TOKEN"), value: "grpc-S3cret")

    struct Result: Decodable {
        var unary: String
        var unary_trailers: [String: String]
        var items: [String]
        var stream_trailers: [String: String]
        var authorization: [String?]
    }

    static let script = """
        import grpc, json, os, sys
        from concurrent import futures
        cert = open(os.environ["CERT"], "rb").read()
        key = open(os.environ["KEY"], "rb").read()
        gateway_ca = open(os.environ["GATEWAY_CA"], "rb").read()
        port = int(os.environ["SERVER_PORT"])
        seen = []
        def unary(request, context):
            seen.append(dict(context.invocation_metadata()).get("authorization"))
            context.set_trailing_metadata((("x-trailer", "t1"),))
            return b"echo:" + request
        def stream(request, context):
            seen.append(dict(context.invocation_metadata()).get("authorization"))
            count = int(request)
            for i in range(count):
                yield b"item%d" % i
            context.set_trailing_metadata((("x-count", str(count)),))
        handler = grpc.method_handlers_generic_handler("test.Echo", {
            "Unary": grpc.unary_unary_rpc_method_handler(unary),
            "Stream": grpc.unary_stream_rpc_method_handler(stream),
        })
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        server.add_generic_rpc_handlers((handler,))
        server.add_secure_port("127.0.0.1:%d" % port, grpc.ssl_server_credentials(((key, cert),)))
        server.start()
        channel = grpc.secure_channel("localhost:%d" % port, grpc.ssl_channel_credentials(root_certificates=gateway_ca))
        response, call = channel.unary_unary("/test.Echo/Unary").with_call(b"hello", timeout=20)
        stream_call = channel.unary_stream("/test.Echo/Stream")(b"5", timeout=20)
        items = [item.decode() for item in stream_call]
        print(json.dumps({
            "unary": response.decode(),
            "unary_trailers": {k: v for k, v in call.trailing_metadata()},
            "items": items,
            "stream_trailers": {k: v for k, v in stream_call.trailing_metadata()},
            "authorization": seen,
        }))
        server.stop(0)
        """

    @Test func unaryAndServerStreamingCallsPassWithTrailersAndTheCredential() async throws {
        let pki = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-grpc")
        let paths = try pki.write(to: dir)
        let port = try freeLoopbackPort()
        let gateway = try await GatewayHarness.start { config in
            config.upstreams = [UpstreamConfig(
                name: "grpc", hosts: [HostPattern("localhost")!], ports: [port],
                tls: UpstreamTLSSettings(caFile: paths.caBundle), intercept: true,
                auth: AuthConfig(kind: .bearer(token: Self.token)), httpVersion: .auto
            )]
            config.access.connectPorts = [port]
            config.interception = InterceptionConfig(stateDir: "\(dir)/state")
        }
        defer { Task { try? await gateway.stop() } }

        let run = try await ProcessRunner.run("python3", ["-c", Self.script], environment: [
            "CERT": paths.serverChain, "KEY": paths.leafKey, "GATEWAY_CA": "\(dir)/state/ca.pem", "SERVER_PORT": "\(port)",
            "grpc_proxy": gateway.proxyURL, "https_proxy": gateway.proxyURL, "no_proxy": "", "NO_PROXY": "", "no_grpc_proxy": "",
        ], timeout: .seconds(60))
        #expect(run.status == 0, "\(run.stderrString)\n\(gateway.logs.text)")
        let result = try JSONDecoder().decode(Result.self, from: Data(run.stdout))
        #expect(result.unary == "echo:hello")
        #expect(result.unary_trailers["x-trailer"] == "t1", "\(result.unary_trailers)")
        #expect(result.items == (0..<5).map { "item\($0)" })
        #expect(result.stream_trailers["x-count"] == "5", "\(result.stream_trailers)")
        #expect(result.authorization == ["Bearer \(Self.token.value)", "Bearer \(Self.token.value)"], "the credential reached the server on both calls")
        #expect(gateway.logs.text.contains("POST https://localhost:\(port)/test.Echo/Unary 200"), "\(gateway.logs.text)")
    }
}
