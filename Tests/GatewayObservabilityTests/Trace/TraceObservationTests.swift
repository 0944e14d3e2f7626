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

/// The event loop's trace observation (issue 14: one object, no locks): what
/// it captures of the body and the response head, one record per exchange,
/// and the curl line tagged `request=<id>` as the exchange's logger tags it.
@Suite("Trace observation on the event loop", .timeLimit(.minutes(1)))
struct TraceObservationTests {
    private struct Rig {
        let dir: String
        let file: String
        let writer: TraceWriter
        let policy: TracePolicy
        let lines: NIOLockedValueBox<[(message: String, metadata: Logger.Metadata)]>
        let logger: Logger

        init() throws {
            (dir, file) = try TraceWriterTests.tempFile()
            let lines = NIOLockedValueBox<[(message: String, metadata: Logger.Metadata)]>([])
            logger = Logger(label: "trace-observation") { _ in
                ClosureLogHandler { event, metadata in lines.withLockedValue { $0.append((event.message.description, metadata)) } }
            }
            self.lines = lines
            writer = TraceWriter(file: file, maxFileBytes: 1 << 24, maxFiles: 1, bufferRecords: 10, maxQueuedBytes: 1 << 26)
            // No logger override: the line goes through the exchange's logger, as in the gateway.
            policy = TracePolicy(config: GatewayConfig(), writer: writer, proxyURL: "http://127.0.0.1:8080")
        }

        func request(body: ProxyBody) -> ProxyRequest {
            ProxyRequest(
                method: .POST, scheme: .http, host: "api.test", port: 80, target: "/v1/items",
                headers: ["Host": "api.test", "Content-Type": "text/plain"], body: body
            )
        }

        func records() async throws -> [TraceRecord] {
            await writer.flush()
            return TraceFiles.records(file)
        }
    }

    @Test func aBodyTeedInPartsAndTheResponseHeadAreInTheRecord() async throws {
        let rig = try Rig()
        defer { try? FileManager.default.removeItem(atPath: rig.dir) }
        let context = RequestContext(id: "obs-1", clientAddress: "127.0.0.1:5000", logger: rig.logger, tagsLinesWithID: true)
        let observation = rig.policy.begin(rig.request(body: .passedThrough(declaredLength: nil)), context: context)
        #expect(observation.readsResponseHeaders, "the record shows the response's fields: the listener must pass them")
        observation.requestBodyPart(ByteBuffer(string: "hello "))
        observation.requestBodyPart(ByteBuffer(string: "world"))
        observation.responseHead(status: 201, headers: ["Content-Length": "2", "Via": "1.1 gateway"])
        observation.finish(ExchangeOutcome(status: 201, responseBytes: 2, error: nil))
        observation.finish(ExchangeOutcome(status: 500, responseBytes: 0, error: .internalError))  // ignored

        let records = try await rig.records()
        #expect(records.count == 1)
        let record = try #require(records.first)
        #expect(record.status == 201)
        #expect(record.error == nil)
        #expect(record.requestBytes == 11)
        #expect(record.curl.contains("--data-binary 'hello world'"))
        #expect(record.responseHeaders == [.init(name: "Content-Length", value: "2"), .init(name: "Via", value: "1.1 gateway")])
        // The curl line, tagged as through `context.logger`.
        let line = try #require(rig.lines.withLockedValue { $0 }.first { $0.message.hasPrefix("trace obs-1: curl -x") })
        #expect(line.metadata["request"] == .string("obs-1"))
    }

    @Test func anEmptyBodyIsCapturedAsEmptyAndAnUntaggedContextLogsNoID() async throws {
        let rig = try Rig()
        defer { try? FileManager.default.removeItem(atPath: rig.dir) }
        let context = RequestContext(id: "obs-2", clientAddress: "127.0.0.1:5000", logger: rig.logger)
        let observation = rig.policy.begin(rig.request(body: .passedThrough(declaredLength: nil)), context: context)
        observation.finish(ExchangeOutcome(status: nil, responseBytes: 0, error: nil, cancelled: true))

        let record = try #require(try await rig.records().first)
        #expect(record.requestBytes == 0)
        #expect(record.error == "cancelled")
        #expect(record.responseHeaders == nil)
        #expect(!record.curl.contains("--data-binary"))
        let line = try #require(rig.lines.withLockedValue { $0 }.first { $0.message.hasPrefix("trace obs-2:") })
        #expect(line.metadata["request"] == nil)
    }

    @Test func aBodyOverTheTeeLimitIsNotCaptured() async throws {
        let rig = try Rig()
        defer { try? FileManager.default.removeItem(atPath: rig.dir) }
        let context = RequestContext(id: "obs-3", clientAddress: "127.0.0.1:5000", logger: rig.logger)
        let observation = rig.policy.begin(rig.request(body: .passedThrough(declaredLength: nil)), context: context)
        let chunk = ByteBuffer(repeating: UInt8(ascii: "x"), count: 1 << 20)
        for _ in 0...(TracePolicy.teeLimit >> 20) { observation.requestBodyPart(chunk) }
        observation.requestBodyPart(ByteBuffer(string: "after the limit"))
        observation.finish(ExchangeOutcome(status: 200, responseBytes: 0, error: nil))

        let record = try #require(try await rig.records().first)
        #expect(record.requestBytes == nil)
        #expect(record.curl.contains("body not captured: unknown bytes"))
    }
}
