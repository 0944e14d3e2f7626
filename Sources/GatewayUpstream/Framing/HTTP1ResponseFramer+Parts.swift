import GatewayCore
import NIOCore
import NIOHTTP1

/// The head and the chunked body: the parts of a response that need scanning.
extension HTTP1ResponseFramer {
    /// A head once CRLFCRLF is in; 1xx heads are skipped (101 is passed on, for
    /// the exchange to refuse: the gateway never asks for an upgrade).
    mutating func nextHead(_ bytes: inout ByteBuffer, scanFrom: Int) throws(HTTP1FramingError) -> Event? {
        guard let length = Self.headLength(in: bytes, scanFrom: scanFrom) else {
            guard bytes.readableBytes <= maxHeadBytes else { return try fail(.headTooLarge) }
            state = .head(scanFrom: max(0, bytes.readableBytes - 3))
            return nil
        }
        guard length <= maxHeadBytes else { return try fail(.headTooLarge) }
        let parsed = bytes.withUnsafeReadableBytes { raw in
            Result { () throws(HTTP1FramingError) in
                try HTTP1ResponseHeadParser.parse(UnsafeRawBufferPointer(rebasing: raw[..<length]))
            }
        }
        guard case .success(let head) = parsed else {
            if case .failure(let error) = parsed { return try fail(error) }
            return nil
        }
        bytes.moveReaderIndex(forwardBy: length)
        switch head.head.status.code {
        case 101:
            state = .idle
            return .head(Head(head: head.head, declaredLength: nil, keepAlive: false, untilClose: true))
        case 100..<200:
            state = .head(scanFrom: 0)
            return try nextHead(&bytes, scanFrom: 0)
        default:
            return startBody(of: head)
        }
    }

    /// The offset just past the head's CRLFCRLF, if it is in.
    static func headLength(in bytes: ByteBuffer, scanFrom: Int) -> Int? {
        bytes.withUnsafeReadableBytes { raw -> Int? in
            var i = max(scanFrom, 3)
            while i < raw.count {
                if raw[i] == 10, raw[i - 1] == 13, raw[i - 2] == 10, raw[i - 3] == 13 { return i + 1 }
                i += 1
            }
            return nil
        }
    }

    /// Chunk lines, chunk data (as slices), the CRLF after each, and the trailer
    /// section, which is read and dropped (as NIOHTTP1's parts never carried it on).
    mutating func nextChunked(_ bytes: inout ByteBuffer) throws(HTTP1FramingError) -> Event? {
        while bytes.readableBytes > 0 {
            switch state {
            case .chunkData(let remaining):
                let slice = bytes.readSlice(length: min(remaining, bytes.readableBytes))!
                state = remaining == slice.readableBytes ? .chunkDataEnd : .chunkData(remaining: remaining - slice.readableBytes)
                return .body(slice)
            case .chunkDataEnd:
                guard bytes.readableBytes >= 2 else { return nil }
                guard bytes.readInteger(as: UInt16.self) == 0x0D0A else { return try fail(.malformedChunk) }
                state = .chunkLine
            case .chunkLine:
                guard let line = try readLine(&bytes) else { return nil }
                guard let size = Self.chunkSize(line) else { return try fail(.malformedChunk) }
                state = size == 0 ? .trailers : .chunkData(remaining: size)
            case .trailers:
                guard let line = try readLine(&bytes) else { return nil }
                if line.readableBytes == 0 { return finish() }
            default:
                return nil
            }
        }
        return nil
    }

    /// A line without its CRLF, or nil until it is all in.
    private mutating func readLine(_ bytes: inout ByteBuffer) throws(HTTP1FramingError) -> ByteBuffer? {
        let end = bytes.withUnsafeReadableBytes { raw in HTTP1ResponseHeadParser.lineEnd(in: raw, from: 0) }
        guard let end else {
            let bareLF = bytes.withUnsafeReadableBytes { $0.firstIndex(of: 10) != nil }
            if bareLF || bytes.readableBytes > Self.maxChunkLineBytes { _ = try fail(.malformedChunk) }
            return nil
        }
        guard end <= Self.maxChunkLineBytes else { _ = try fail(.malformedChunk); return nil }
        let line = bytes.readSlice(length: end)!
        bytes.moveReaderIndex(forwardBy: 2)
        return line
    }

    /// `hex[;extensions]`; at most 15 hex digits.
    static func chunkSize(_ line: ByteBuffer) -> Int? {
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
