import Foundation
import GatewayCore
@testable import GatewayListener
import Logging
import NIOHTTP1
import Testing

/// The log line of a refused request never carries a password.
struct ExchangeLogLineTests {
    @Test(arguments: [
        ("http://user:s3cret-pw@example.com/p?token=abc&x=1", "http://example.com/p?token=&x="),
        ("http://user:s3cret-pw@example.com", "http://example.com"),
        ("HTTPS://a:b@c@example.com:8443/x", "HTTPS://example.com:8443/x"),
        ("user:s3cret-pw@example.com:443", "example.com:443"),
        ("http://example.com/p?next=http://u:p@x", "http://example.com/p?next="),
        ("/relative?a=1", "/relative?a="),
        ("http://example.com/a@b", "http://example.com/a@b"),
        ("http://h/p?a=1=2&&b&é=ü#f&c=3", "http://h/p?a=&&b&é=&c="),
        ("http://h/p?", "http://h/p?"),
    ])
    func userInfoAndQueryValuesAreDropped(_ url: String, _ expected: String) {
        #expect(LoggedText.withoutQueryValues(url) == expected)
        #expect(!LoggedText.withoutQueryValues(url).contains("s3cret-pw"))
    }

    @Test func withoutUserInfoKeepsEverythingElse() {
        #expect(LoggedText.withoutUserInfo("http://u:p@h:81/x?y#z") == "http://h:81/x?y#z")
        #expect(LoggedText.withoutUserInfo("h:443") == "h:443")
    }

    /// The line names the method as the client sent it: an extension method
    /// by its name, not as `RAW(value: "BREW")`.
    @Test(arguments: [
        (HTTPMethod.GET, "GET"), (.HEAD, "HEAD"), (.POST, "POST"), (.PUT, "PUT"), (.DELETE, "DELETE"), (.PATCH, "PATCH"),
        (.OPTIONS, "OPTIONS"), (.CONNECT, "CONNECT"), (.TRACE, "TRACE"), (.PROPFIND, "PROPFIND"), (.MSEARCH, "MSEARCH"),
        (.RAW(value: "BREW"), "BREW"), (.RAW(value: "M-SEARCH"), "M-SEARCH"), (.RAW(value: "GET"), "GET"),
    ])
    func methodTextIsTheMethodAsSent(_ method: HTTPMethod, _ name: String) {
        #expect(LoggedText.text(of: method) == name)
    }

    /// `ms=` reads as `"\((elapsed * 100).rounded() / 100)"` wrote it, without `Double`'s description.
    @Test func hundredthsTextIsWhatInterpolationWrote() {
        var values: [Double] = [
            0, 0.004, 0.005, 0.006, 0.41, 0.5, 1, 12, 12.3, 12.34, 99.995, 99.999, 123_456.789, 1e12 + 0.25,
            9_999_999_999_999.99, 1e13, 1e14, 1e15, 1e17, -0.0, -1.5, .infinity, -.infinity, .nan, .greatestFiniteMagnitude,
        ]
        for hundredths in 0..<20_000 { values.append(Double(hundredths) / 100) }
        for _ in 0..<20_000 { values.append(Double.random(in: 0..<10)) }
        for _ in 0..<20_000 { values.append(Double.random(in: 0..<100_000_000)) }
        let mismatches = values.filter { LoggedText.hundredthsText($0) != "\(($0 * 100).rounded() / 100)" }
        let shown = mismatches.prefix(5).map { value in (value, LoggedText.hundredthsText(value)) }
        #expect(mismatches.isEmpty, "value and text: \(shown)")
    }

    /// Issue 39: a C1 control or bidi override in the target reaches the info
    /// line (and the WebSocket and aborted lines) as a visible escape.
    @Test func controlAndBidiCharactersOfTheTargetAreEscaped() {
        #expect(LoggedText.loggedTarget("http://h/a\u{9B}2J\u{202E}b?token=x") == #"http://h/a\u{9B}2J\u{202E}b?token="#)
        #expect(LoggedText.loggedTarget("http://h/plain?x=1") == "http://h/plain?x=")
        let lines = LogLines()
        let logger = Logger(label: "t") { _ in CollectingLogHandler(lines: lines) }
        let context = RequestContext(id: "r", clientAddress: "127.0.0.1:1", logger: logger)
        ExchangeLogLine.log(
            context, method: .GET, target: .uri("/p\u{202E}q\u{9B}2J"), status: 200, started: .now, bytesIn: 0, bytesOut: 0, upstream: nil, error: nil
        )
        #expect(lines.messages == [#"GET /p\u{202E}q\u{9B}2J 200"#])
    }
}

/// Events logged, in order, and their messages.
final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [LogEvent] = []

    var events: [LogEvent] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    var messages: [String] { events.map { $0.message.description } }

    func append(_ event: LogEvent) {
        lock.lock()
        stored.append(event)
        lock.unlock()
    }
}

/// Keeps each event in a ``LogLines`` (a handler other than the gateway's: lines come as events).
struct CollectingLogHandler: LogHandler {
    let lines: LogLines
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.append(event)
    }
}
