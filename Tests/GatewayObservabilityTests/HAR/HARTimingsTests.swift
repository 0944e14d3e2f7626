import GatewayObservability
import Testing

/// HAR timings from a record's phases: disjoint phases on one timeline, so the
/// entry's `time` (the sum of those that apply) is the exchange's duration.
@Suite("HAR timings", .timeLimit(.minutes(1)))
struct HARTimingsTests {
    static func record(duration: Double, attempts: [TraceRecord.Attempt]) -> TraceRecord {
        TraceRecord(
            id: "t", time: "2026-11-21T23:59:35.123Z", client: "c", upstream: "api", method: "GET", endpoint: "h/p",
            attempts: attempts, status: 200, error: nil, requestBytes: 0, responseBytes: 2, duration: duration, curl: "curl 'http://h/p'", curlDirect: ""
        )
    }

    static func applied(_ t: HARTimings) -> [Double] { [t.blocked, t.dns, t.connect, t.ssl, t.send, t.wait, t.receive].filter { $0 >= 0 } }

    static func expectSums(_ t: HARTimings, to milliseconds: Double, sourceLocation: SourceLocation = #_sourceLocation) {
        let sum = applied(t).reduce(0, +)
        #expect(abs(sum - t.total) < 1e-9, "\(t)", sourceLocation: sourceLocation)
        #expect(abs(t.total - milliseconds) < 0.005, "\(t)", sourceLocation: sourceLocation)
        #expect(t.send >= 0 && t.wait >= 0 && t.receive >= 0, "HAR requires send, wait, receive", sourceLocation: sourceLocation)
    }

    /// A retry: the 503 attempt and the backoff are `blocked`; the second attempt
    /// connects anew with TLS: connect, ssl, send, wait, receive follow.
    @Test func retriedOverANewTLSConnection() {
        let record = Self.record(duration: 0.100, attempts: [
            .init(status: 503, error: nil, reusedConnection: false, connect: 0.002, tls: 0.004, ttfb: 0.010, total: 0.011, start: 0.001, connectStart: 0, sent: 0.007),
            .init(status: 200, error: nil, reusedConnection: false, connect: 0.003, tls: 0.005, ttfb: 0.030, total: 0.040, start: 0.050, connectStart: 0.001, sent: 0.012),
        ])
        let t = HARTimings(record: record)
        #expect(t == HARTimings(blocked: 51, dns: -1, connect: 3, ssl: 5, send: 3, wait: 18, receive: 20), "\(t)")
        Self.expectSums(t, to: 100)
    }

    @Test func reusedConnectionHasNoConnectNorSSL() {
        let record = Self.record(duration: 0.020, attempts: [
            .init(status: 200, error: nil, reusedConnection: true, connect: nil, tls: nil, ttfb: 0.015, total: 0.019, start: 0.0005, connectStart: nil, sent: 0.001),
        ])
        let t = HARTimings(record: record)
        #expect(t.connect == -1 && t.ssl == -1 && t.dns == -1)
        #expect(t.blocked == 0.5)
        Self.expectSums(t, to: 20)
    }

    /// The connection never came: connect takes the rest; the later phases are 0 (required) or -1.
    @Test func failedConnectTakesTheRest() {
        var record = Self.record(duration: 0.250, attempts: [
            .init(status: nil, error: "connect_timeout", reusedConnection: false, connect: nil, tls: nil, ttfb: nil, total: 0.249, start: 0.001, connectStart: nil, sent: nil),
        ])
        record.status = 504
        let t = HARTimings(record: record)
        #expect(t == HARTimings(blocked: 1, dns: -1, connect: 249, ssl: -1, send: 0, wait: 0, receive: 0), "\(t)")
        Self.expectSums(t, to: 250)
    }

    /// No response head: the wait takes the rest.
    @Test func upstreamTimeoutWaits() {
        let record = Self.record(duration: 1.0, attempts: [
            .init(status: nil, error: "upstream_timeout", reusedConnection: true, connect: nil, tls: nil, ttfb: nil, total: 1.0, start: 0, connectStart: nil, sent: 0.002),
        ])
        let t = HARTimings(record: record)
        #expect(t == HARTimings(blocked: 0, dns: -1, connect: -1, ssl: -1, send: 2, wait: 998, receive: 0), "\(t)")
        Self.expectSums(t, to: 1000)
    }

    /// The upstream answered before the (streamed) request was fully sent: no negative phase.
    @Test func earlyResponseIsClamped() {
        let record = Self.record(duration: 0.050, attempts: [
            .init(status: 413, error: nil, reusedConnection: true, connect: nil, tls: nil, ttfb: 0.005, total: 0.049, start: 0, connectStart: nil, sent: 0.030),
        ])
        let t = HARTimings(record: record)
        #expect(t.wait == 0 && t.send == 30 && t.receive == 20, "\(t)")
        Self.expectSums(t, to: 50)
    }

    @Test func localAnswerIsAllBlocked() {
        let t = HARTimings(record: Self.record(duration: 0.0031234, attempts: []))
        #expect(t == HARTimings(blocked: 3.123, dns: -1, connect: -1, ssl: -1, send: 0, wait: 0, receive: 0), "\(t)")
        Self.expectSums(t, to: 3.123)
    }

    /// Records written before the offsets existed still give phases that sum to the duration.
    @Test func recordsWithoutOffsets() {
        let record = Self.record(duration: 0.100, attempts: [
            .init(status: 200, error: nil, reusedConnection: false, connect: 0.010, tls: 0.020, ttfb: 0.060, total: 0.090),
        ])
        let t = HARTimings(record: record)
        #expect(t.blocked == 10 && t.connect == 10 && t.ssl == 20 && t.send == 0 && t.wait == 30 && t.receive == 30, "\(t)")
        Self.expectSums(t, to: 100)
    }
}
