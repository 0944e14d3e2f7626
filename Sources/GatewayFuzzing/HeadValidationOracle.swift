import GatewayListener
import NIOHTTP1

/// RFC 9112's rules for a request head, written independently of
/// `RequestHeadValidator` so that the fuzzer can compare the two.
enum HeadValidationOracle {
    /// Names are tokens, values have no control characters but HTAB, at most
    /// one `Host`, and one in every HTTP/1.1+ request but `CONNECT`.
    static func headersAcceptable(_ head: ClientRequestHead) -> Bool {
        var hosts = 0
        for (name, value) in head.headers {
            guard !name.isEmpty, name.utf8.allSatisfy(isToken) else { return false }
            for byte in value.utf8 where byte != 0x09 && (byte < 0x20 || byte == 0x7F) {
                return false
            }
            if name.lowercased() == "host" { hosts += 1 }
        }
        if hosts > 1 { return false }
        let needsHost = head.version.major == 1 && head.version.minor >= 1 && head.method != .CONNECT
        return hosts == 1 || !needsHost
    }

    /// The body framing the gateway may forward, or nil when the request must be refused.
    static func framing(_ head: ClientRequestHead) -> RequestHeadValidator.BodyFraming? {
        let lengths = head.headers.filter { $0.name.lowercased() == "content-length" }.map { $0.value }
        let encodings = head.headers.filter { $0.name.lowercased() == "transfer-encoding" }.map { $0.value }
        if !lengths.isEmpty, !encodings.isEmpty { return nil }
        if !encodings.isEmpty {
            guard head.version.major == 1, head.version.minor >= 1, head.method != .CONNECT else { return nil }
            // A list: empty elements do not count (RFC 9110 §5.6.1).
            let codings = encodings.joined(separator: ",").split(separator: ",", omittingEmptySubsequences: false)
                .map { $0.trimmingOWS().lowercased() }
                .filter { !$0.isEmpty }
            return codings == ["chunked"] ? .chunked : nil
        }
        guard !lengths.isEmpty else { return BodyFramingOracle.none }
        // A field value has no leading or trailing whitespace (RFC 9112 §5.1), and
        // `5, 5` is a list a recipient may take as 5 (RFC 9110 §8.6).
        let values = lengths.joined(separator: ",").split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingOWS() }
            .filter { !$0.isEmpty }
        guard let first = values.first else { return nil }
        guard values.allSatisfy({ $0 == first }), (1...18).contains(first.utf8.count),
            first.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let length = Int(first)
        else { return nil }
        if length > 0, head.method == .CONNECT { return nil }
        return length == 0 ? BodyFramingOracle.none : .length(length)
    }

    private static func isToken(_ byte: UInt8) -> Bool {
        if byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") { return true }
        if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { return true }
        if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") { return true }
        return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
}

/// `.none` spelled so that it is not read as `Optional.none`.
private enum BodyFramingOracle {
    static let none = RequestHeadValidator.BodyFraming.none
}

extension Substring {
    /// Without leading and trailing spaces and tabs (optional whitespace).
    func trimmingOWS() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
