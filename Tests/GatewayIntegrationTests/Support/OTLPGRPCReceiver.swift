import Foundation
import GatewayTesting

/// An OpenTelemetry collector speaking OTLP/gRPC for the tracing tests: a
/// grpcio server implementing `opentelemetry.proto.collector.trace.v1.TraceService/Export`
/// (the servicer opentelemetry-proto ships), printing each span as a JSON line
/// with the call's metadata. Plain h2c, or TLS (optionally requiring a client
/// certificate); `failWith` answers every call with that gRPC status code instead.
final class OTLPGRPCReceiver: @unchecked Sendable {
    static let script = #"""
        import json, sys
        from concurrent import futures
        import grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

        args = json.loads(sys.argv[1])

        class Service(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request, context):
                metadata = {k: v for k, v in context.invocation_metadata()}
                if args.get("failWith"):
                    print(json.dumps({"refused": True}), flush=True)
                    code = next(c for c in grpc.StatusCode if c.value[0] == args["failWith"])
                    context.abort(code, "collector says no")
                peer_cert = context.auth_context().get("x509_common_name", [b""])[0].decode()
                for rs in request.resource_spans:
                    service = ""
                    for a in rs.resource.attributes:
                        if a.key == "service.name":
                            service = a.value.string_value
                    for ss in rs.scope_spans:
                        for span in ss.spans:
                            print(json.dumps({
                                "name": span.name, "kind": span.kind, "traceID": span.trace_id.hex(),
                                "serviceName": service, "apiKey": metadata.get("x-api-key", ""),
                                "clientCN": peer_cert,
                            }), flush=True)
                return trace_service_pb2.ExportTraceServiceResponse()

        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Service(), server)
        if args.get("cert"):
            creds = grpc.ssl_server_credentials(
                [(open(args["key"], "rb").read(), open(args["cert"], "rb").read())],
                root_certificates=open(args["clientCA"], "rb").read() if args.get("clientCA") else None,
                require_client_auth=bool(args.get("clientCA")))
            port = server.add_secure_port("127.0.0.1:0", creds)
        else:
            port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        print("listening %d" % port, flush=True)
        server.wait_for_termination()
        """#

    struct Span: Decodable {
        var name: String
        var kind: Int
        var traceID: String
        var serviceName: String
        var apiKey: String
        var clientCN: String
    }

    private let process: Process
    private let output: PipeReader
    let port: Int

    private init(process: Process, output: PipeReader, port: Int) {
        self.process = process
        self.output = output
        self.port = port
    }

    struct TLS {
        var cert: String
        var key: String
        /// Require a client certificate chaining to this CA.
        var clientCA: String?

        /// The collector scripts' argument: `{"cert", "key", "clientCA", "failWith"}`, the empty ones left out.
        func json(failWith: Int? = nil) throws -> String {
            var args: [String: Any] = [:]
            if !cert.isEmpty {
                args["cert"] = cert
                args["key"] = key
            }
            if let clientCA { args["clientCA"] = clientCA }
            if let failWith { args["failWith"] = failWith }
            return String(decoding: try JSONSerialization.data(withJSONObject: args), as: UTF8.self)
        }
    }

    static func start(tls: TLS? = nil, failWith: Int? = nil) async throws -> OTLPGRPCReceiver {
        let json = try (tls ?? TLS(cert: "", key: "")).json(failWith: failWith)
        let (process, output, port) = try await ListeningPython.start(script: script, arguments: [json])
        return OTLPGRPCReceiver(process: process, output: output, port: port)
    }

    var log: String { String(decoding: output.bytes, as: UTF8.self) }

    var spans: [Span] {
        log.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("{\"name\"") else { return nil }
            return try? JSONDecoder().decode(Span.self, from: Data(line.utf8))
        }
    }

    var refusals: Int { log.components(separatedBy: "\"refused\": true").count - 1 }

    func waitFor(timeout: Duration = .seconds(20), _ done: (OTLPGRPCReceiver) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if done(self) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return done(self)
    }

    func stop() {
        if process.isRunning { process.terminate() }
    }

    deinit { stop() }
}
