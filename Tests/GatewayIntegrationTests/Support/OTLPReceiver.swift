import Foundation
import GatewayTesting
import NIOConcurrencyHelpers

/// An OpenTelemetry collector for the tracing tests: a small HTTP server in
/// Python that decodes each OTLP/HTTP export (`ExportTraceServiceRequest`,
/// protobuf, with PyPI's `opentelemetry-proto`) and prints its spans as JSON
/// lines, which this reads back. On 127.0.0.1, on a port the OS picks; plain
/// HTTP, or HTTPS requiring a client certificate (`CERT_REQUIRED`).
final class OTLPReceiver: Sendable {
    /// One span as the collector received it; attribute values as text.
    struct ReceivedSpan: Decodable, Sendable, CustomStringConvertible {
        struct Event: Decodable, Sendable {
            var name: String
            var attributes: [String: String]
        }

        var path: String
        var contentType: String
        var serviceName: String
        var traceID: String
        var spanID: String
        var parentSpanID: String
        var name: String
        /// OTLP's `SpanKind`: 1 internal, 2 server, 3 client.
        var kind: Int
        var start: UInt64
        var end: UInt64
        var attributes: [String: String]
        var events: [Event]
        /// OTLP's status code: 0 unset, 1 ok, 2 error.
        var status: Int
        /// The client certificate's common name (HTTPS), else empty.
        var clientCN: String

        var isServer: Bool { kind == 2 }
        var isClient: Bool { kind == 3 }

        var description: String { "\(name) kind \(kind) trace \(traceID) span \(spanID) parent \(parentSpanID) \(attributes)" }
    }

    static let script = #"""
        import json, ssl, sys, threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest, ExportTraceServiceResponse

        def text(v):
            kind = v.WhichOneof("value")
            if kind is None:
                return ""
            value = getattr(v, kind)
            if kind == "bool_value":
                return "true" if value else "false"
            if kind in ("string_value", "int_value", "double_value"):
                return str(value)
            return str(value).replace("\n", " ")

        printing = threading.Lock()
        args = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}

        def peer_cn(connection):
            cert = connection.getpeercert() if isinstance(connection, ssl.SSLSocket) else None
            for rdn in (cert or {}).get("subject", ()):
                for key, value in rdn:
                    if key == "commonName":
                        return value
            return ""

        def attributes(items):
            return {a.key: text(a.value) for a in items}

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                lines = []
                for resource_spans in request.resource_spans:
                    resource = attributes(resource_spans.resource.attributes)
                    for scope_spans in resource_spans.scope_spans:
                        for span in scope_spans.spans:
                            lines.append(json.dumps({
                                "path": self.path,
                                "contentType": self.headers.get("Content-Type") or "",
                                "serviceName": resource.get("service.name", ""),
                                "traceID": span.trace_id.hex(),
                                "spanID": span.span_id.hex(),
                                "parentSpanID": span.parent_span_id.hex(),
                                "name": span.name,
                                "kind": span.kind,
                                "start": span.start_time_unix_nano,
                                "end": span.end_time_unix_nano,
                                "attributes": attributes(span.attributes),
                                "events": [{"name": e.name, "attributes": attributes(e.attributes)} for e in span.events],
                                "status": span.status.code,
                                "clientCN": peer_cn(self.connection),
                            }, sort_keys=True))
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
                with printing:
                    for line in lines:
                        sys.stdout.write(line + "\n")
                    sys.stdout.flush()

            def log_message(self, format, *args):
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if args.get("cert"):
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(args["cert"], args["key"])
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(args["clientCA"])
            # A refused handshake is an OSError in accept(): the server logs it and goes on.
            server.socket = context.wrap_socket(server.socket, server_side=True)
        print("listening %d" % server.server_address[1], flush=True)
        server.serve_forever()
        """#

    private let process: Process
    /// The collector's output, read on a thread of its own (see `PipeReader`).
    private let output: PipeReader
    let port: Int

    private let tls: Bool

    private init(process: Process, output: PipeReader, port: Int, tls: Bool) {
        self.process = process
        self.output = output
        self.port = port
        self.tls = tls
    }

    /// Starts the collector (python3 with `opentelemetry-proto`; `.ci/run` installs it);
    /// with `tls`, over HTTPS, requiring a client certificate of `tls.clientCA`.
    static func start(tls: OTLPGRPCReceiver.TLS? = nil) async throws -> OTLPReceiver {
        let arguments = try tls.map { [try $0.json()] } ?? []
        let (process, output, port) = try await ListeningPython.start(script: script, arguments: arguments)
        return OTLPReceiver(process: process, output: output, port: port, tls: tls != nil)
    }

    struct ReceiverError: Error, CustomStringConvertible {
        let output: String
        var description: String { "the OTLP receiver did not start (is opentelemetry-proto installed?): \(output)" }
    }

    /// `OTEL_EXPORTER_OTLP_ENDPOINT` for it (spans go to `/v1/traces`).
    var baseURL: String { tls ? "https://localhost:\(port)" : "http://127.0.0.1:\(port)" }

    /// What it printed besides spans (a Python error).
    var log: String { String(decoding: output.bytes, as: UTF8.self) }

    /// Every span received so far, in order.
    var spans: [ReceivedSpan] {
        let decoder = JSONDecoder()
        return log.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("{") else { return nil }
            return try? decoder.decode(ReceivedSpan.self, from: Data(line.utf8))
        }
    }

    /// Waits (bounded) until `done` holds for the spans received; returns them.
    func waitForSpans(timeout: Duration = .seconds(20), until done: ([ReceivedSpan]) -> Bool) async -> [ReceivedSpan] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let received = spans
            if done(received) { return received }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return spans
    }

    /// The spans of `traceID`, once the SERVER span and `clients` CLIENT spans arrived.
    func trace(_ traceID: String, clients: Int = 1, timeout: Duration = .seconds(20)) async -> [ReceivedSpan] {
        let all = await waitForSpans(timeout: timeout) { spans in
            let trace = spans.filter { $0.traceID == traceID }
            return trace.contains(where: { $0.isServer }) && trace.filter({ $0.isClient }).count >= clients
        }
        return all.filter { $0.traceID == traceID }
    }

    /// Stops the collector (a collector going down mid-run) and waits for it to exit.
    func stop() async {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}
