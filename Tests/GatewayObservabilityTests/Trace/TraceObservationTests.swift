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

/// The event loop's trace observation (one object, no locks): what
/// it captures of the body and the response head, one record per exchange,
/// and the curl line tagged `request=<id>` as the exchange's logger tags it.
@Suite("Trace observation on the event loop", .timeLimit(.minutes(1)))
struct TraceObservationTests {
    private struct Rig {
        let dir: String
        let file: String
        let writer: TraceWriter
        let observer: TraceObserver
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
            observer = TraceObserver(config: GatewayConfig(), writer: writer, proxyURL: "http://127.0.0.1:8080")
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
        let observation = rig.observer.begin(rig.request(body: .passedThrough(declaredLength: nil)), context: context)
        observation.requestBodyPart(ByteBuffer(string: "hello "))
        observation.requestBodyPart(ByteBuffer(string: "world"))
        observation.responseHead(status: 201, fields: ResponseFields(["Content-Length": "2"]), via: "1.1 gateway")
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

    @Test func upstreamFieldLinesAreRedactedAsHeadersAre() async throws {
        // The record's fields come from the upstream's bytes; they read as the
        // same fields made strings first would (redacted, scrubbed, trimmed, repaired).
        let (dir, file) = try TraceWriterTests.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var config = GatewayConfig()
        config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("api.test")!], auth: AuthConfig(kind: .bearer(token: Secret(source: .env("API_TOKEN"), value: "s3cret-token"))))]
        let writer = TraceWriter(file: file, maxFileBytes: 1 << 24, maxFiles: 1, bufferRecords: 10, maxQueuedBytes: 1 << 26)
        let observer = TraceObserver(config: config, writer: writer, proxyURL: "http://127.0.0.1:8080", logger: Logger(label: "quiet"))
        var head = ByteBuffer(string: "HTTP/1.1 200 OK\r\n")
        let start = head.writerIndex
        head.writeString("Server:\torigin  \r\nSet-Cookie: session=abc\r\nConnection: close\r\nX-Echo: Bearer s3cret-token\r\n")
        head.writeBytes(Array("X-Name: caf".utf8) + [0xC3, 0xA9] + Array("\r\nX-Bad: a".utf8) + [0xFF] + Array("\r\nx-api-key: k\r\nX-Empty:\r\n".utf8))
        let lines = head.getSlice(at: start, length: head.writerIndex - start)!
        let fields = ResponseFields(lines: lines, dropped: 0b100)

        let request = ProxyRequest(method: .GET, scheme: .http, host: "api.test", port: 80, target: "/", headers: ["Host": "api.test"], upstreamName: "api")
        let observation = observer.begin(request, context: RequestContext(id: "fields", clientAddress: "127.0.0.1:1", logger: Logger(label: "quiet")))
        observation.responseHead(status: 200, fields: fields, via: "1.1 gateway")
        head.clear()  // the read buffer is reused: the observation kept its own copy
        head.writeString(String(repeating: "x", count: lines.readableBytes + 32))
        observation.finish(ExchangeOutcome(status: 200, responseBytes: 0, error: nil))
        await writer.flush()

        let record = try #require(TraceFiles.records(file).first)
        #expect(record.responseHeaders == [
            .init(name: "Server", value: "origin"),
            .init(name: "Set-Cookie", value: "${REDACTED_SET_COOKIE}"),
            .init(name: "X-Echo", value: "Bearer [REDACTED:API_TOKEN]"),
            .init(name: "X-Name", value: "café"),
            .init(name: "X-Bad", value: "a\u{FFFD}"),
            .init(name: "x-api-key", value: "${REDACTED_X_API_KEY}"),
            .init(name: "X-Empty", value: ""),
            .init(name: "Via", value: "1.1 gateway"),
        ])
        // The same fields made `HTTPHeaders` first (the gateway's own responses) read the same.
        let viaHeaders = observer.begin(request, context: RequestContext(id: "headers", clientAddress: "127.0.0.1:1", logger: Logger(label: "quiet")))
        viaHeaders.responseHead(status: 200, fields: ResponseFields(fields.headers), via: "1.1 gateway")
        viaHeaders.finish(ExchangeOutcome(status: 200, responseBytes: 0, error: nil))
        await writer.flush()
        let again = try #require(TraceFiles.records(file).last)
        #expect(again.id == "headers")
        #expect(again.responseHeaders == record.responseHeaders)
    }

    @Test func anEmptyBodyIsCapturedAsEmptyAndAnUntaggedContextLogsNoID() async throws {
        let rig = try Rig()
        defer { try? FileManager.default.removeItem(atPath: rig.dir) }
        let context = RequestContext(id: "obs-2", clientAddress: "127.0.0.1:5000", logger: rig.logger)
        let observation = rig.observer.begin(rig.request(body: .passedThrough(declaredLength: nil)), context: context)
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
        let observation = rig.observer.begin(rig.request(body: .passedThrough(declaredLength: nil)), context: context)
        let chunk = ByteBuffer(repeating: UInt8(ascii: "x"), count: 1 << 20)
        for _ in 0...(TraceObserver.teeLimit >> 20) { observation.requestBodyPart(chunk) }
        observation.requestBodyPart(ByteBuffer(string: "after the limit"))
        observation.finish(ExchangeOutcome(status: 200, responseBytes: 0, error: nil))

        let record = try #require(try await rig.records().first)
        #expect(record.requestBytes == nil)
        #expect(record.curl.contains("body not captured: unknown bytes"))
    }
}
