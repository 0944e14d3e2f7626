import GatewayCore
import Logging
import NIOHTTP1

/// The one info line per exchange: method, target without query values, status,
/// duration, bytes (and the trace's `trace_id` and `span_id` while tracing is
/// on, ``RequestContext/addRequestMetadata(to:)``). Never a header value, never a query value; a control or
/// bidi character of the target (C1 `\u{9B}`, U+202E) as a visible escape,
/// never as it is (``TerminalSafety``).
enum ExchangeLogLine {
    /// `url` is only formatted when the line is logged (not at warning level).
    /// Logged through the context's base logger, its `request=<id>` among the
    /// line's own metadata: the same line as through `context.logger`, without
    /// building a tagged logger per request.
    static func log(
        _ context: RequestContext,
        method: HTTPMethod,
        url: @autoclosure () -> String,
        status: Int,
        started: ContinuousClock.Instant,
        bytesIn: Int,
        bytesOut: Int,
        upstream: String?,
        error: GatewayError.Code?
    ) {
        let logger = context.baseLogger
        guard logger.logLevel <= .info else { return }
        let elapsed = (ContinuousClock.now - started).seconds * 1000
        // Each value a `.string` as `"\(value)"` made it, without interpolation
        // (`String(status)` is also the message's); the status text made once.
        let code = String(status)
        // Room for every key (`trace_id` and `span_id` while tracing is on): one allocation, never a resize.
        var metadata = Logger.Metadata(minimumCapacity: 9)
        metadata["status"] = .string(code)
        metadata["ms"] = .string(hundredthsText(elapsed))
        metadata["bytes_in"] = .string(String(bytesIn))
        metadata["bytes_out"] = .string(String(bytesOut))
        if let upstream { metadata["upstream"] = .string(upstream) }
        if let error { metadata["error"] = .string(error.rawValue) }
        context.addRequestMetadata(to: &metadata)
        // `METHOD url status` in a string sized once (interpolation regrows it as it goes).
        let name = text(of: method)
        let target = loggedTarget(url())
        var message = ""
        message.reserveCapacity(name.utf8.count + target.utf8.count + code.utf8.count + 2)
        message += name
        message += " "
        message += target
        message += " "
        message += code
        logger.info(Logger.Message(stringLiteral: message), metadata: metadata)
    }

    /// `value` rounded to hundredths, written as `"\((value * 100).rounded() / 100)"`
    /// writes it (`0.0`, `0.05`, `0.4`, `12.0`, `12.34`), without `Double`'s
    /// shortest-digits search: a number of hundredths below 10^15 has at most
    /// 15 significant digits, so that search finds exactly its digits. Anything
    /// else (negative, huge, not a number) as interpolation writes it.
    static func hundredthsText(_ value: Double) -> String {
        let scaled = (value * 100).rounded()
        guard scaled.sign == .plus, scaled < 1e15 else { return "\(scaled / 100)" }
        let hundredths = Int(scaled)
        let fraction = hundredths % 100
        var text = String(hundredths / 100)
        text += "."
        if fraction < 10 {
            text += "0"
            if fraction > 0 { text += String(fraction) }  // .0X, else .0
        } else {
            text += String(fraction % 10 == 0 ? fraction / 10 : fraction)
        }
        return text
    }

    /// The method as lines name it (as `"\(method)"` does), without the
    /// reflection interpolation uses for it (`HTTPMethod` has no `description`:
    /// five allocations per line): its raw value, except for the two cases whose
    /// raw value differs from their name.
    static func text(of method: HTTPMethod) -> String {
        switch method {
        case .RAW, .MSEARCH: "\(method)"
        default: method.rawValue
        }
    }

    /// `url` as log lines show it: ``withoutQueryValues(_:)``, then each
    /// control or bidi character as `\u{XXXX}` (the same string when it has none).
    static func loggedTarget(_ url: String) -> String {
        TerminalSafety.escaped(withoutQueryValues(url))
    }

    /// `https://h/p?token=abc&x=1` → `https://h/p?token=&x=`; userinfo is
    /// dropped too (``withoutUserInfo(_:)``): a refused request's target is
    /// logged as the client wrote it, password included.
    static func withoutQueryValues(_ url: String) -> String {
        // Most targets have neither a query nor userinfo: returned as they are, unscanned.
        guard url.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "@") }) else { return url }
        let url = withoutUserInfo(url)
        let bytes = url.utf8
        guard let q = bytes.firstIndex(of: UInt8(ascii: "?")) else { return url }
        // By bytes, in one copy: each `name=value` pair keeps `name=`; cut only at
        // ASCII bytes, so the result is as valid UTF-8 as the URL.
        var kept: [UInt8] = []
        kept.reserveCapacity(bytes.count)
        kept.append(contentsOf: bytes[...q])
        var inValue = false
        for byte in bytes[bytes.index(after: q)...] {
            if byte == UInt8(ascii: "&") {
                inValue = false
            } else if inValue {
                continue
            } else if byte == UInt8(ascii: "=") {
                inValue = true
            }
            kept.append(byte)
        }
        return String(decoding: kept, as: UTF8.self)
    }

    /// `http://user:pass@h/p` → `http://h/p`, `user:pass@h:443` (a CONNECT
    /// target) → `h:443`: everything up to the authority's last `@` goes.
    /// By bytes: a scheme is letters, digits, `+`, `-`, `.` (any non-ASCII byte
    /// counts too: a line loses a userinfo rather than keeps one).
    static func withoutUserInfo(_ url: String) -> String {
        let bytes = url.utf8
        var authorityStart = bytes.startIndex
        if let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[colon...].starts(with: "://".utf8),
            bytes[..<colon].allSatisfy(isSchemeByte)
        {
            authorityStart = bytes.index(colon, offsetBy: 3)
        } else if bytes.first == UInt8(ascii: "/") {
            return url  // origin-form: no authority
        }
        let rest = bytes[authorityStart...]
        let authorityEnd = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: UInt8(ascii: "@")) else { return url }
        return String(url[..<authorityStart]) + String(url[bytes.index(after: at)...])
    }

    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), 0x80...:
            return true
        default:
            return false
        }
    }
}
