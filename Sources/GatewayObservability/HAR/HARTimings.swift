/// An entry's `timings` in milliseconds, derived from a trace record's last
/// attempt (the one whose response the client got) on one timeline from the
/// exchange's start to its end:
///
/// - `blocked`: from the start to the last attempt's connect (or, on a reused
///   connection, to the attempt's start): earlier attempts, retry backoffs,
///   rate-limit and token-refresh waits, pool queueing;
/// - `dns`: -1, resolution is part of `connect` (the gateway does not time it apart);
/// - `connect`: TCP connect of a new connection, -1 on a reused one;
/// - `ssl`: the upstream TLS handshake, -1 without one;
/// - `send`: until the request was fully written; `wait`: until the response
///   head; `receive`: until the exchange ended.
///
/// The phases do not overlap (unlike HAR 1.1's habit, `ssl` is not also
/// counted in `connect`), so `time`, their sum leaving out the -1s, is the
/// exchange's duration. A phase whose end was not recorded (the exchange failed
/// in it) takes the rest of the time; phases after it are 0 (`send`, `wait`,
/// `receive`, which HAR requires) or -1.
public struct HARTimings: Sendable, Codable, Equatable {
    public var blocked: Double
    public var dns: Double
    public var connect: Double
    public var ssl: Double
    public var send: Double
    public var wait: Double
    public var receive: Double

    /// The sum of the phases that apply (not -1): the entry's `time`.
    public var total: Double {
        let micros = [blocked, dns, connect, ssl, send, wait, receive].filter { $0 >= 0 }.reduce(Int64(0)) { $0 + Int64(($1 * 1000).rounded()) }
        return Double(micros) / 1000
    }

    public init(blocked: Double, dns: Double, connect: Double, ssl: Double, send: Double, wait: Double, receive: Double) {
        self.blocked = blocked
        self.dns = dns
        self.connect = connect
        self.ssl = ssl
        self.send = send
        self.wait = wait
        self.receive = receive
    }

    public init(record: TraceRecord) {
        var line = Timeline(end: max(0, record.duration))
        guard let last = record.attempts.last else {
            // Answered without reaching an upstream (a local answer, a failure before any attempt).
            self.init(blocked: line.until(line.end), dns: -1, connect: -1, ssl: -1, send: 0, wait: 0, receive: 0)
            return
        }
        // Records written before attempt offsets were recorded: the attempt ended with the exchange.
        let start = last.start ?? max(0, line.end - (last.total ?? line.end))
        let connectStart = last.reusedConnection ? nil : start + (last.connectStart ?? 0)
        let blocked = line.until(connectStart ?? start)
        var connect = -1.0, ssl = -1.0
        if let connectStart {
            let connected = last.connect.map { connectStart + $0 }
            connect = line.until(connected)
            if let tls = last.tls { ssl = line.until(connected.map { $0 + tls }, optional: true) }
        }
        // Without a recorded send (older records) but with a response head: the send is folded into the wait.
        let sendEnd = last.sent.map { start + $0 } ?? (last.ttfb == nil ? nil : line.cursor)
        let send = line.until(sendEnd, required: true)
        let wait = line.until(last.ttfb.map { start + $0 }, required: true)
        let receive = line.until(line.end, required: true)
        self.init(blocked: blocked, dns: -1, connect: connect, ssl: ssl, send: send, wait: wait, receive: receive)
    }

    /// Walks the exchange's timeline phase by phase, in seconds, giving milliseconds.
    private struct Timeline {
        let end: Double
        var cursor = 0.0
        /// Set once a phase's end was unknown: it took the rest of the time.
        var exhausted = false

        init(end: Double) { self.end = end }

        /// The phase from the cursor to `point` (clamped to the timeline), in ms.
        /// An unknown point: the phase takes the rest; after that, phases are
        /// 0 when `required`, else -1.
        mutating func until(_ point: Double?, required: Bool = false, optional: Bool = false) -> Double {
            if exhausted { return required ? 0 : -1 }
            guard let point else {
                if optional { return -1 }
                exhausted = true
                return HARTimings.milliseconds(end - cursor)
            }
            let clamped = min(max(point, cursor), end)
            defer { cursor = clamped }
            return HARTimings.milliseconds(clamped - cursor)
        }
    }

    /// Seconds as milliseconds in whole microseconds (so sums are exact to the microsecond).
    static func milliseconds(_ seconds: Double) -> Double {
        (max(0, seconds) * 1_000_000).rounded() / 1000
    }
}
