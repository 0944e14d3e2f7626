@testable import GatewayCore
import Logging
import NIOHTTP1
import Testing

/// The exchange line queued as values is written as exactly the bytes of the
/// swift-log event it replaces (people grep and parse these lines).
@Suite(.timeLimit(.minutes(1)))
struct ExchangeLineTests {
    final class FixedTrace: ExchangeTraceContext {
        let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
        let spanID = "00f067aa0ba902b7"
    }

    static func line(
        id: String? = "1x-4", method: HTTPMethod = .GET, target: ExchangeLine.Target, status: Int = 200, ms: Double = 0.41,
        bytesIn: Int = 0, bytesOut: Int = 1024, upstream: String? = nil, error: GatewayError.Code? = nil, traced: Bool = false
    ) -> ExchangeLine {
        ExchangeLine(
            requestID: id, method: method, target: target, status: status, milliseconds: ms, bytesIn: bytesIn, bytesOut: bytesOut,
            upstream: upstream, error: error, trace: traced ? FixedTrace() : nil, source: "GatewayListener"
        )
    }

    static let lines: [ExchangeLine] = [
        line(id: nil, target: .uri("/"), ms: 0, bytesOut: 0),
        line(target: .routed(scheme: .http, host: "example.com", port: 80, target: "/p"), ms: 12.345, bytesIn: 10, upstream: "api"),
        line(
            target: .routed(scheme: .https, host: "h", port: 8443, target: "/a\u{9B}2J\u{202E}b?token=x&y=2"), status: 504, error: .requestTimeout,
            traced: true
        ),
        line(target: .routed(scheme: .https, host: "::1", port: 443, target: "/x?q"), upstream: "api", error: .connectFailed, traced: true),
        line(target: .routed(scheme: .http, host: "2001:db8::1", port: 8080, target: "/é/ü"), bytesIn: 123_456_789),
        line(target: .routed(scheme: .http, host: "u@h", port: 81, target: "/p"), ms: 1e16),
        line(method: .POST, target: .uri("http://u:s3cret@h/p?token=abc&x=1"), status: 407, error: .proxyAuthRequired),
        line(method: .CONNECT, target: .uri("user:pw@h:443"), status: 403, ms: 99.995, error: .hostNotAllowed),
        line(method: .RAW(value: "BREW"), target: .uri("/p\u{202E}q\u{9B}2J\u{1B}[0m"), status: 418, traced: true),
        line(method: .MSEARCH, target: .uri("*"), status: -1, ms: .nan, bytesIn: Int.max, bytesOut: Int.min),
    ]

    /// The event the listener logs for `line` (its keys as `.string` values
    /// made by interpolation, the message `METHOD target status`), written by
    /// the event path.
    static func eventLine(_ line: ExchangeLine, label: String) -> String {
        var metadata: Logger.Metadata = [
            "status": "\(line.status)",
            "ms": "\((line.milliseconds * 100).rounded() / 100)",
            "bytes_in": "\(line.bytesIn)",
            "bytes_out": "\(line.bytesOut)",
        ]
        if let upstream = line.upstream { metadata["upstream"] = "\(upstream)" }
        if let error = line.error { metadata["error"] = "\(error.rawValue)" }
        if let id = line.requestID { metadata["request"] = "\(id)" }
        if let trace = line.trace {
            metadata["trace_id"] = "\(trace.traceID)"
            metadata["span_id"] = "\(trace.spanID)"
        }
        let message = "\(line.method.rawValue) \(LoggedText.loggedTarget(line.target.string)) \(line.status)"
        let event = LogEvent(
            level: .info, message: "\(message)", metadata: metadata, source: nil, file: "GatewayListener/Connection/ExchangeLogLine.swift",
            function: #function, line: #line
        )
        return GatewayLogHandler.format(event, label: label, metadata: [:], provided: nil, timestamp: "2026-11-22T02:08:37+0000")
    }

    @Test(arguments: ExchangeLineTests.lines)
    func theTypedLineIsTheEventsLine(_ line: ExchangeLine) {
        for label in ["gateway", ""] {
            let typed = line.format(label: label, timestamp: "2026-11-22T02:08:37+0000")
            #expect(typed == Self.eventLine(line, label: label))
        }
    }

    @Test func aLineReadsAsDocumented() {
        let traced = Self.line(
            target: .routed(scheme: .http, host: "h", port: 80, target: "/p?token=abc"), upstream: "api", error: .requestTimeout, traced: true
        )
        #expect(
            traced.format(label: "gateway", timestamp: "TS")
                == "TS info gateway: bytes_in=0 bytes_out=1024 error=request_timeout ms=0.41 request=1x-4 span_id=00f067aa0ba902b7 status=200"
                + " trace_id=4bf92f3577b34da6a3ce929d0e0e4736 upstream=api [GatewayListener] GET http://h/p?token= 200\n"
        )
        let escaped = Self.line(id: nil, target: .routed(scheme: .https, host: "h", port: 8443, target: "/a\u{9B}2J\u{202E}b"), ms: 3)
        #expect(
            escaped.format(label: "gateway", timestamp: "TS")
                == #"TS info gateway: bytes_in=0 bytes_out=1024 ms=3.0 status=200 [GatewayListener] GET https://h:8443/a\u{9B}2J\u{202E}b 200"# + "\n"
        )
    }

    /// A routed URL's parts join as ``ProxyRequest/url`` joins them.
    @Test(arguments: [
        (UpstreamScheme.http, "example.com", 80, "/"), (.http, "example.com", 8080, "/p?q=1"), (.https, "h", 443, "/x"),
        (.https, "h", 80, "/x"), (.http, "::1", 80, "/"), (.https, "2001:db8::1", 8443, "/a?b"), (.http, "h", 0, ""),
        // Queries lose their values, in place or through the rewrite: the two paths must agree.
        (.http, "h", 80, "/p?token=abc&x=1"), (.https, "h", 443, "/a@b?c=d&e"), (.http, "h", 80, "/p?"),
        (.http, "h", 80, "/p?a&b=c=d&&e=?f"), (.http, "h", 80, "/u?q=\u{202E}x"), (.http, "h", 80, "/a@b/c"),
        (.http, "h", 80, "?q=1"), (.http, "h", 80, "*"), (.http, "h", 80, "/p#f?g=1"),
    ] as [(UpstreamScheme, String, Int, String)])
    func routedTargetIsTheRequestsURL(_ scheme: UpstreamScheme, _ host: String, _ port: Int, _ target: String) {
        let request = ProxyRequest(method: .GET, scheme: scheme, host: host, port: port, target: target, headers: [:])
        #expect(ExchangeLine.Target(request).string == request.url)
        var logged: [UInt8] = []
        ExchangeLine.Target(request).appendLogged(to: &logged)
        #expect(String(decoding: logged, as: UTF8.self) == LoggedText.loggedTarget(request.url))
    }

    @Test(arguments: [0, 1, 9, 10, 99, 100, 12_345, -1, -10, Int.max, Int.min, Int.max - 1, Int.min + 1, 999_999_999_999_999, 1_000_000_000_000_000])
    func decimalsAreWhatStringWrites(_ value: Int) {
        var text = "x"
        LoggedText.appendDecimal(value, to: &text)
        #expect(text == "x" + String(value))
        var bytes = Array("x".utf8)
        LoggedText.appendDecimal(value, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "x" + String(value))
    }

    /// Whether `logger` has a sink (outside `#expect`: the sink is not `Equatable`).
    static func hasSink(_ logger: Logger) -> Bool {
        ExchangeLineSink(logger) != nil
    }

    @Test func onlyTheGatewaysOwnHandlerHasASink() {
        // Nothing is logged: the queue never writes.
        let queue = LogLineQueue(fileDescriptor: -1, thread: .shared)
        let own = Logger(label: "gateway") { GatewayLogHandler(label: $0, queue: queue, metadataProvider: nil) }
        let sink = ExchangeLineSink(own)
        #expect(sink?.logsInfo == true)
        #expect(sink?.belongs(to: own) == true)
        #expect(sink?.label == "gateway")

        var quiet = own
        quiet.logLevel = .warning
        #expect(ExchangeLineSink(quiet)?.logsInfo == false)

        var tagged = own
        tagged[metadataKey: "component"] = "x"
        #expect(!Self.hasSink(tagged), "the handler's own metadata: lines go as events")

        let provided = Logger(label: "gateway") {
            GatewayLogHandler(label: $0, queue: queue, metadataProvider: Logger.MetadataProvider { ["k": "v"] })
        }
        #expect(!Self.hasSink(provided), "a metadata provider: lines go as events")
        #expect(!Self.hasSink(Logger(label: "gateway") { _ in SwiftLogNoOpLogHandler() }))
    }

    @Test func aContextDropsItsSinkWithItsLogger() {
        let queue = LogLineQueue(fileDescriptor: -1, thread: .shared)
        let own = Logger(label: "gateway") { GatewayLogHandler(label: $0, queue: queue, metadataProvider: nil) }
        var context = RequestContext(id: "r", clientAddress: "127.0.0.1:1", logger: own, exchangeLines: ExchangeLineSink(own))
        #expect(context.exchangeLines?.logsInfo == true)
        context.baseLogger.logLevel = .debug
        let dropped = context.exchangeLines == nil
        #expect(dropped, "a replaced logger may log elsewhere")
        let none = RequestContext(id: "r", clientAddress: "127.0.0.1:1", logger: own).exchangeLines == nil
        #expect(none, "no sink given: lines go as events")
    }
}
