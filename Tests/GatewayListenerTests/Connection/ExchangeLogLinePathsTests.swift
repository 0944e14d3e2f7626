import Foundation
@testable import GatewayCore
@testable import GatewayListener
import Glibc
import Logging
import NIOHTTP1
import Testing

/// The exchange line goes to the gateway's own handler as values and to any
/// other handler as an event: the two are the same line, byte for byte.
@Suite(.timeLimit(.minutes(1)))
struct ExchangeLogLinePathsTests {
    final class FixedTrace: ExchangeTraceContext {
        let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
        let spanID = "00f067aa0ba902b7"
    }

    struct Case: Sendable {
        var tagged = true
        var traced = false
        var method = HTTPMethod.GET
        var target: ExchangeLine.Target
        var status = 200
        var milliseconds = 12.34
        var upstream: String?
        var error: GatewayError.Code?
    }

    static let cases: [Case] = [
        Case(tagged: false, target: .uri("/")),
        Case(target: .routed(scheme: .http, host: "example.com", port: 80, target: "/p"), upstream: "api"),
        Case(
            traced: true, target: .routed(scheme: .https, host: "h", port: 8443, target: "/a\u{9B}2J\u{202E}b?token=x&y=2"), status: 504,
            upstream: "api", error: .requestTimeout
        ),
        Case(traced: true, target: .routed(scheme: .http, host: "::1", port: 8080, target: "/x"), milliseconds: 0),
        Case(method: .POST, target: .uri("http://u:s3cret@h/p?token=abc"), status: 407, milliseconds: 0.005, error: .proxyAuthRequired),
        Case(tagged: false, traced: true, method: .RAW(value: "BREW"), target: .uri("/p\u{202E}q\u{9B}2J"), status: 418),
    ]

    static func context(_ logger: Logger, _ test: Case) -> RequestContext {
        let context = RequestContext(id: "1x-4", clientAddress: "127.0.0.1:1", logger: logger, tagsLinesWithID: test.tagged)
        if test.traced { context.record.trace = FixedTrace() }
        return context
    }

    @Test(arguments: ExchangeLogLinePathsTests.cases)
    func theQueuedLineIsTheEventsLine(_ test: Case) throws {
        let events = LogLines()
        let context = Self.context(Logger(label: "gateway") { _ in CollectingLogHandler(lines: events) }, test)
        let line = ExchangeLogLine.line(
            context, method: test.method, target: test.target, status: test.status, milliseconds: test.milliseconds,
            bytesIn: 17, bytesOut: 1024, upstream: test.upstream, error: test.error
        )
        ExchangeLogLine.logEvent(context, line)
        let event = try #require(events.events.first)
        #expect(event.source == ExchangeLogLine.source)
        let fromEvent = GatewayLogHandler.format(event, label: "gateway", metadata: [:], provided: nil, timestamp: "TS")
        #expect(line.format(label: "gateway", timestamp: "TS") == fromEvent)
        #expect(!fromEvent.contains("s3cret") && !fromEvent.contains("token=x") && !fromEvent.contains("\u{9B}"))
    }

    /// Reads what was written to the pipe once its write end is closed.
    static func readAll(_ fd: Int32) -> String {
        var all: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count <= 0 { break }
            all += chunk[0..<count]
        }
        return String(decoding: all, as: UTF8.self)
    }

    @Test func theGatewaysHandlerGetsTheLineAsValues() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let queue = LogLineQueue(fileDescriptor: fds[1], thread: WriterThread(name: "exchange-line-test"))
        let logger = Logger(label: "gateway") { GatewayLogHandler(label: $0, queue: queue, metadataProvider: nil) }
        var quiet = logger
        quiet.logLevel = .warning
        let sink = try #require(ExchangeLineSink(logger))
        let context = RequestContext(id: "1x-4", clientAddress: "127.0.0.1:1", logger: logger, exchangeLines: sink, tagsLinesWithID: true)
        let quietContext = RequestContext(
            id: "1x-5", clientAddress: "127.0.0.1:1", logger: quiet, exchangeLines: ExchangeLineSink(quiet), tagsLinesWithID: true
        )
        let request = ProxyRequest(method: .GET, scheme: .http, host: "h", port: 8080, target: "/p?token=abc", headers: [:])
        ExchangeLogLine.log(
            quietContext, method: .GET, target: ExchangeLine.Target(request), status: 200, started: .now, bytesIn: 0, bytesOut: 1, upstream: nil, error: nil
        )
        ExchangeLogLine.log(
            context, method: .GET, target: ExchangeLine.Target(request), status: 200, started: .now, bytesIn: 3, bytesOut: 1024, upstream: "api", error: nil
        )
        queue.flush()
        close(fds[1])
        let lines = Self.readAll(fds[0]).split(separator: "\n")
        #expect(lines.count == 1, "the warning level's line is not written")
        let line = try #require(lines.first)
        #expect(line.contains(" info gateway: bytes_in=3 bytes_out=1024 ms="), "\(line)")
        #expect(line.hasSuffix(" request=1x-4 status=200 upstream=api [GatewayListener] GET http://h:8080/p?token= 200"), "\(line)")
    }
}
