public import GatewayCore
public import NIOHTTP1

extension RequestFields {
    /// Fields kept as the bytes of `lines` (`name: value` lines, each ending
    /// in CRLF), as the listener's parser keeps a client's: for tests that
    /// must cover the byte form, not only fields given as strings.
    public static func lines(_ lines: String) -> RequestFields {
        let bytes = Array(lines.utf8)
        let count = bytes.count { $0 == UInt8(ascii: "\n") }
        return bytes.withUnsafeBytes { raw in
            // swiftlint:disable:next force_try
            RequestFields(lines: try! FieldLines(parsing: raw, from: 0, to: raw.count, count: count))
        }
    }
}

extension RequestFields {
    /// `headers` as lines: ``lines(_:)`` of the same fields, in order.
    public static func lines(_ headers: HTTPHeaders) -> RequestFields {
        lines(headers.map { "\($0.name): \($0.value)\r\n" }.joined())
    }
}
