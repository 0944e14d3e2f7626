public import GatewayCore

/// A W3C `traceparent` (Trace Context Level 1, §3.2): `version-traceid-parentid-flags`,
/// `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`. Read by hand (55
/// bytes, lowercase hex): an invalid value starts a new trace, silently.
public struct TraceParent: Sendable, Equatable, CustomStringConvertible {
    /// The trace: 32 lowercase hex digits, not all zero.
    public let traceID: String
    /// The caller's span: 16 lowercase hex digits, not all zero.
    public let parentID: String
    /// `trace-flags`: bit 0 is `sampled`.
    public let flags: UInt8

    /// The caller recorded its span and asks the callee to record too.
    public var sampled: Bool { flags & 0x01 != 0 }

    /// The fields checked as the specification says; nil when one is invalid.
    public init?(traceID: String, parentID: String, flags: UInt8) {
        guard Self.isID(traceID.utf8, length: 32), Self.isID(parentID.utf8, length: 16) else { return nil }
        self.traceID = traceID
        self.parentID = parentID
        self.flags = flags
    }

    /// Parses a header value (spaces and tabs around it ignored). Version
    /// `00` is exactly 55 bytes; a later version (not `ff`) may be longer, its
    /// fields after the flags separated by a `-`, and is read as version `00`.
    /// Upper-case hex, all-zero ids, a wrong length or separator: nil.
    public init?(parsing value: some StringProtocol) {
        var bytes = Array(value.utf8)
        while let last = bytes.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { bytes.removeLast() }
        let leading = bytes.prefix { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }.count
        if leading > 0 { bytes.removeFirst(leading) }
        guard bytes.count >= 55, let version = Self.hexByte(bytes[0], bytes[1]), version != 0xFF else { return nil }
        if version == 0 {
            guard bytes.count == 55 else { return nil }
        } else {
            guard bytes.count == 55 || bytes[55] == UInt8(ascii: "-") else { return nil }
        }
        let dash = UInt8(ascii: "-")
        guard bytes[2] == dash, bytes[35] == dash, bytes[52] == dash, let flags = Self.hexByte(bytes[53], bytes[54]) else { return nil }
        let traceID = bytes[3..<35], parentID = bytes[36..<52]
        guard Self.isID(traceID, length: 32), Self.isID(parentID, length: 16) else { return nil }
        self.traceID = String(decoding: traceID, as: UTF8.self)
        self.parentID = String(decoding: parentID, as: UTF8.self)
        self.flags = flags
    }

    /// The request's `traceparent`, when it has exactly one and it is valid
    /// (two are as invalid as a malformed one: the specification's rule).
    public init?(headers: RequestFields) {
        let values = headers["traceparent"]
        guard values.count == 1, let parsed = TraceParent(parsing: values[0]) else { return nil }
        self = parsed
    }

    /// The value as the gateway writes it: version `00`.
    public var headerValue: String {
        "00-\(traceID)-\(parentID)-\(Self.hex(flags))"
    }

    public var description: String { headerValue }

    /// The request's `tracestate` fields as one value (several join with
    /// commas, as the specification says), or nil when it has none.
    public static func traceState(in headers: RequestFields) -> String? {
        let values = headers["tracestate"].filter { !$0.isEmpty }
        return values.isEmpty ? nil : values.joined(separator: ",")
    }

    // MARK: Hex

    /// `length` lowercase hex digits, not all `0`.
    static func isID<Bytes: Collection>(_ bytes: Bytes, length: Int) -> Bool where Bytes.Element == UInt8 {
        bytes.count == length && bytes.allSatisfy(Self.isLowerHex) && bytes.contains { $0 != UInt8(ascii: "0") }
    }

    private static func isLowerHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// Two lowercase hex digits as a byte.
    static func hexByte(_ high: UInt8, _ low: UInt8) -> UInt8? {
        guard let high = nibble(high), let low = nibble(low) else { return nil }
        return high << 4 | low
    }

    /// A byte as two lowercase hex digits.
    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
    }
}
