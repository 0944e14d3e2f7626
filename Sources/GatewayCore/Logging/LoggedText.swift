public import NIOHTTP1

/// How the exchange's info line writes its values: the method's name, the
/// target without query values or userinfo and with its control and bidi
/// characters escaped, the duration in hundredths, integers. One definition
/// for both ways the line is made: as a swift-log event (the listener's
/// `ExchangeLogLine`) and as values formatted on the log writer thread
/// (``ExchangeLine``), so that the two write the same bytes.
public enum LoggedText {
    /// The method as lines name it: as the request line (or `:method`) sent
    /// it, e.g. `PURGE` (its raw value; checked to be a token
    /// when it was read). Not `"\(method)"`: interpolation reflects on the enum
    /// (five allocations a line) and writes an extension method as
    /// `RAW(value: "PURGE")`.
    public static func text(of method: HTTPMethod) -> String {
        method.rawValue
    }

    /// `url` as log lines show it: ``withoutQueryValues(_:)``, then each
    /// control or bidi character as `\u{XXXX}` (the same string when it has none).
    public static func loggedTarget(_ url: String) -> String {
        TerminalSafety.escaped(withoutQueryValues(url))
    }

    /// `https://h/p?token=abc&x=1` → `https://h/p?token=&x=`; userinfo is
    /// dropped too (``withoutUserInfo(_:)``): a refused request's target is
    /// logged as the client wrote it, password included.
    public static func withoutQueryValues(_ url: String) -> String {
        // Most targets have neither a query nor userinfo: returned as they are, unscanned.
        guard url.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "@") }) else { return url }
        let url = withoutUserInfo(url)
        let bytes = url.utf8
        guard let q = bytes.firstIndex(of: UInt8(ascii: "?")) else { return url }
        var kept: [UInt8] = []
        kept.reserveCapacity(bytes.count)
        kept.append(contentsOf: bytes[..<q])
        appendWithoutValues(query: bytes[q...], to: &kept)
        return String(decoding: kept, as: UTF8.self)
    }

    /// A query (from its `?` on) appended to `kept` as ``withoutQueryValues(_:)``
    /// keeps it: each `name=value` pair keeps `name=`. By bytes, in one copy;
    /// cut only at ASCII bytes, so the result is as valid UTF-8 as the query.
    static func appendWithoutValues(query: some Sequence<UInt8>, to kept: inout [UInt8]) {
        var inValue = false
        for byte in query {
            if byte == UInt8(ascii: "&") {
                inValue = false
            } else if inValue {
                continue
            } else if byte == UInt8(ascii: "=") {
                inValue = true
            }
            kept.append(byte)
        }
    }

    /// `http://user:pass@h/p` → `http://h/p`, `user:pass@h:443` (a CONNECT
    /// target) → `h:443`: everything up to the authority's last `@` goes.
    /// By bytes: a scheme is letters, digits, `+`, `-`, `.` (any non-ASCII byte
    /// counts too: a line loses a userinfo rather than keeps one).
    public static func withoutUserInfo(_ url: String) -> String {
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

    /// `value` rounded to hundredths, written as `"\((value * 100).rounded() / 100)"`
    /// writes it (`0.0`, `0.05`, `0.4`, `12.0`, `12.34`): ``appendHundredths(_:to:)``.
    public static func hundredthsText(_ value: Double) -> String {
        var bytes: [UInt8] = []
        appendHundredths(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// ``hundredthsText(_:)`` appended to `bytes`, without `Double`'s
    /// shortest-digits search: a number of hundredths below 10^15 has at most
    /// 15 significant digits, so that search finds exactly its digits. Anything
    /// else (negative, huge, not a number) as interpolation writes it.
    public static func appendHundredths(_ value: Double, to bytes: inout [UInt8]) {
        let scaled = (value * 100).rounded()
        guard scaled.sign == .plus, scaled < 1e15 else {
            bytes.append(contentsOf: "\(scaled / 100)".utf8)
            return
        }
        let hundredths = Int(scaled)
        let fraction = hundredths % 100
        appendDecimal(hundredths / 100, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        if fraction < 10 {
            bytes.append(UInt8(ascii: "0"))
            if fraction > 0 { appendDecimal(fraction, to: &bytes) }  // .0X, else .0
        } else {
            appendDecimal(fraction % 10 == 0 ? fraction / 10 : fraction, to: &bytes)
        }
    }

    /// `value` in decimal, as `String(value)` writes it, appended to `text`:
    /// the digits written into a buffer on the stack (``DecimalDigits``), then
    /// added as one string (up to 15 bytes, a small string: no allocation).
    public static func appendDecimal(_ value: Int, to text: inout String) {
        text += DecimalDigits.withDigits(of: value) { String(decoding: $0, as: UTF8.self) }
    }

    /// `value` in decimal, as `String(value)` writes it, appended to `bytes`.
    public static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        DecimalDigits.withDigits(of: value) { bytes.append(contentsOf: $0) }
    }
}
