public import NIOCore

/// Reads a chunked body (RFC 9112 §7.1) from bytes as they arrive: chunk data
/// as slices of the input (never copies), size lines and the CRLF after each
/// chunk checked, the trailer section read and dropped (NIOHTTP1's parts never
/// carried it on either). A pure value, shared by the framing of upstream
/// responses and of client requests.
public struct ChunkedBodyDecoder: Equatable, Sendable {
    public enum Event: Equatable, Sendable {
        case data(ByteBuffer)
        /// The last chunk and the trailer section are in: the body is complete.
        case end
    }

    /// Bytes that are not a chunked body.
    public struct Malformed: Error, Equatable {}

    /// The longest chunk-size line (with its extensions) or trailer line.
    public static let maxLineBytes = 4 * 1024

    enum State: Equatable, Sendable {
        case sizeLine
        case data(remaining: Int)
        case dataEnd
        case trailers
        case done
    }

    private var state = State.sizeLine

    public init() {}

    /// The next event from `bytes`, which it consumes as far as it goes; nil
    /// when more bytes are needed (or the body is complete).
    public mutating func next(_ bytes: inout ByteBuffer) throws(Malformed) -> Event? {
        while bytes.readableBytes > 0 {
            switch state {
            case .data(let remaining):
                let slice = bytes.readSlice(length: min(remaining, bytes.readableBytes))!
                state = remaining == slice.readableBytes ? .dataEnd : .data(remaining: remaining - slice.readableBytes)
                return .data(slice)
            case .dataEnd:
                guard bytes.readableBytes >= 2 else { return nil }
                guard bytes.readInteger(as: UInt16.self) == 0x0D0A else { throw Malformed() }
                state = .sizeLine
            case .sizeLine:
                guard let line = try Self.readLine(&bytes) else { return nil }
                guard let size = Self.chunkSize(line) else { throw Malformed() }
                state = size == 0 ? .trailers : .data(remaining: size)
            case .trailers:
                guard let line = try Self.readLine(&bytes) else { return nil }
                if line.readableBytes == 0 {
                    state = .done
                    return .end
                }
            case .done:
                return nil
            }
        }
        return nil
    }

    /// A line without its CRLF, or nil until it is all in.
    private static func readLine(_ bytes: inout ByteBuffer) throws(Malformed) -> ByteBuffer? {
        let end = bytes.withUnsafeReadableBytes { raw in HTTP1HeadLines.lineEnd(in: raw, from: 0) }
        guard let end else {
            let bareLF = bytes.withUnsafeReadableBytes { $0.firstIndex(of: 10) != nil }
            if bareLF || bytes.readableBytes > maxLineBytes { throw Malformed() }
            return nil
        }
        guard end <= maxLineBytes else { throw Malformed() }
        let line = bytes.readSlice(length: end)!
        bytes.moveReaderIndex(forwardBy: 2)
        return line
    }

    /// `hex[;extensions]`; at most 15 hex digits.
    public static func chunkSize(_ line: ByteBuffer) -> Int? {
        line.withUnsafeReadableBytes { raw -> Int? in
            var size = 0
            var digits = 0
            for byte in raw {
                let value: Int
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): value = Int(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): value = Int(byte - UInt8(ascii: "a")) + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): value = Int(byte - UInt8(ascii: "A")) + 10
                case UInt8(ascii: ";"), 32, 9:
                    // Extensions (and whitespace before them) are ignored, but must be field-value bytes.
                    guard digits > 0, raw[digits...].allSatisfy(HTTPFieldBytes.isFieldValueByte) else { return nil }
                    return size
                default: return nil
                }
                digits += 1
                guard digits <= 15 else { return nil }
                size = size * 16 + value
            }
            return digits > 0 ? size : nil
        }
    }
}
