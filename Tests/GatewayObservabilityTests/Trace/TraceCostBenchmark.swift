import GatewayTesting
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import GatewayConfig
import GatewayCore
import Logging
import NIOCore
import NIOHTTP1
import Testing
@testable import GatewayObservability

/// The cost of a traced exchange, run by hand:
/// `GATEWAY_BENCH=1 swift test --filter TraceCostBenchmark`. Prints the CPU
/// per exchange on the submitting thread (what an event loop pays: begin +
/// finish), the whole process's CPU per exchange (the writer thread's
/// formatting and writing included), and the writer-side formatting alone,
/// with the JSON line by hand and by `JSONEncoder` (the first version's).
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["GATEWAY_BENCH"] != nil), .timeLimit(.minutes(5)))
struct TraceCostBenchmark {
    static func threadCPU() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    static func processCPU() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    @Test func costPerTracedExchange() async throws {
        let (dir, file) = try TraceWriterTests.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var config = GatewayConfig()
        config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("api.test")!], auth: AuthConfig(kind: .bearer(token: Secret(source: .env("API_TOKEN"), value: "s3cret-token"))))]
        var quiet = Logger(label: "bench")
        quiet.logLevel = .warning
        let writer = TraceWriter(file: file, maxFileBytes: 1 << 30, maxFiles: 1, bufferRecords: 100_000, maxQueuedBytes: 1 << 30)
        let observer = TraceObserver(config: config, writer: writer, proxyURL: "http://127.0.0.1:8080", logger: quiet)
        let headers: HTTPHeaders = ["Host": "api.test", "User-Agent": "wrk", "Accept": "*/*", "Via": "1.1 gateway"]
        let request = ProxyRequest(method: .GET, scheme: .https, host: "api.test", port: 443, target: "/bytes/1024?x=1", headers: RequestFields.lines(headers), upstreamName: "api")
        let count = 20_000
        for round in 0..<3 {
            let processBefore = Self.processCPU()
            let threadBefore = Self.threadCPU()
            for i in 0..<count {
                let context = RequestContext(id: "bench-\(round)-\(i)", clientAddress: "127.0.0.1:5000", logger: quiet)
                let observation = observer.begin(request, context: context)
                observation.finish(ExchangeOutcome(status: 200, responseBytes: 1024, error: nil))
            }
            let submitting = (Self.threadCPU() - threadBefore) / Double(count) * 1e6
            await writer.flush()
            let whole = (Self.processCPU() - processBefore) / Double(count) * 1e6
            print("trace bench round \(round): submitting thread \(String(format: "%.2f", submitting)) µs/exchange, process \(String(format: "%.2f", whole)) µs/exchange")
        }
        #expect(writer.writtenCount == 3 * count)

        // The writer side alone, on this thread.
        let context = RequestContext(id: "bench-format", clientAddress: "127.0.0.1:5000", logger: quiet)
        let capture = TraceCapture(
            id: context.id, wallStart: Date(), client: context.clientAddress, request: request, recordedUpstream: "api", attempts: [],
            declaredLength: 0, body: [], status: 200, error: nil, responseBytes: 1024,
            responseFields: ResponseFields(["Content-Type": "application/json", "Content-Length": "1024"]), responseVia: "1.1 gateway", startedAt: .now, duration: .milliseconds(1), logger: quiet
        )
        var start = Self.threadCPU()
        var sink = 0
        for _ in 0..<count { sink &+= observer.formatter.entry(for: capture, bodyPath: "/dev/null").line.count }
        let byHand = (Self.threadCPU() - start) / Double(count) * 1e6
        // The first version's way: a record, encoded by `JSONEncoder`.
        let record = try TraceRecord.decode(line: String(decoding: observer.formatter.entry(for: capture, bodyPath: "/dev/null").line, as: UTF8.self))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        start = Self.threadCPU()
        for _ in 0..<count { sink &+= try encoder.encode(record).count }
        let byEncoder = (Self.threadCPU() - start) / Double(count) * 1e6
        print("trace bench formatting: \(String(format: "%.2f", byHand)) µs/record (formatted into bytes), \(String(format: "%.2f", byEncoder)) µs/record (JSONEncoder alone) \(sink > 0)")
    }
}
