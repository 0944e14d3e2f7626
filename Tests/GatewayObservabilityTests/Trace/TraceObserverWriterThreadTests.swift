#if canImport(Glibc)
import Glibc
#endif
import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import Testing
@testable import GatewayObservability

/// The trace observer on the request path only captures: the record (redacted)
/// and its curl line on the log are made on the writer thread.
@Suite("Trace observer on the writer thread", .timeLimit(.minutes(1)))
struct TraceObserverWriterThreadTests {
    @Test func theRecordIsFormattedAndLoggedOffTheEventLoop() async throws {
        let (dir, file) = try TraceWriterTests.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var config = GatewayConfig()
        config.upstreams = [
            UpstreamConfig(
                name: "api", hosts: [HostPattern("api.test")!],
                auth: AuthConfig(kind: .bearer(token: Secret(source: .env("API_TOKEN"), value: "s3cret-token")))
            )
        ]
        let seen = NIOLockedValueBox<[(thread: pthread_t, message: String)]>([])
        let logger = Logger(label: "trace-test") { _ in
            // Keeps each log message with the thread that logged it.
            ClosureLogHandler { event, _ in seen.withLockedValue { $0.append((pthread_self(), event.message.description)) } }
        }
        let writer = TraceWriter(file: file, maxFileBytes: 1 << 20, maxFiles: 1, bufferRecords: 10)
        let observer = TraceObserver(config: config, writer: writer, proxyURL: "http://127.0.0.1:8080", logger: logger)

        let headers: HTTPHeaders = ["Host": "api.test", "Authorization": "Bearer client-secret", "Content-Type": "application/json"]
        let request = ProxyRequest(
            method: .POST, scheme: .https, host: "api.test", port: 443, target: "/v1/items?token=s3cret-token&x=1",
            headers: RequestFields.lines(headers), body: .bytes(ByteBuffer(string: #"{"password":"hunter2","name":"a"}"#)), upstreamName: "api"
        )
        let context = RequestContext(id: "trace-thread-1", clientAddress: "127.0.0.1:5000", logger: logger)
        let submitter = pthread_self()
        let observation = observer.begin(request, context: context)
        observation.requestBodyPart(ByteBuffer(string: #"{"password":"hunter2","name":"a"}"#))
        observation.finish(ExchangeOutcome(status: 201, responseBytes: 12, error: nil))
        // Nothing formatted on this thread.
        #expect(seen.withLockedValue { $0.allSatisfy { pthread_equal($0.thread, submitter) == 0 } })
        await writer.flush()

        let logged = seen.withLockedValue { $0 }
        let curlLine = try #require(logged.first { $0.message.hasPrefix("trace trace-thread-1: curl -x") })
        #expect(pthread_equal(curlLine.thread, submitter) == 0)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(!text.contains("s3cret-token"))
        #expect(!text.contains("client-secret"))
        #expect(!text.contains("hunter2"))
        let record = try TraceRecord.decode(line: text.split(separator: "\n")[0])
        #expect(record.id == "trace-thread-1")
        #expect(record.status == 201)
        #expect(record.responseBytes == 12)
        #expect(record.curlDirect.contains("${API_TOKEN}"))
        #expect(record.curl == String(curlLine.message.dropFirst("trace trace-thread-1: ".count)))
    }
}
