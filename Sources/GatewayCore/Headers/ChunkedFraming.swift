public import NIOCore
public import NIOHTTP1

/// The bytes around the parts of a chunked body (RFC 9112 §7.1), written by the
/// gateway itself on both sides: to upstreams for request bodies of unknown
/// length, to HTTP/1.1 clients for responses of unknown length.
public enum ChunkedFraming {
    /// The size line before a part of `size` bytes (never 0: that is the last chunk).
    public static func sizeLine(_ size: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        precondition(size > 0, "a chunk of size 0 ends the body")
        var line = allocator.buffer(capacity: 18)
        line.writeString(String(size, radix: 16))
        line.writeStaticString("\r\n")
        return line
    }

    /// What follows a part: the CRLF closing its data (if it had any), then with
    /// `isLast` the last chunk and an empty trailer section. Nothing at all is an
    /// empty buffer, still worth writing when its completion is observed.
    public static func after(data: Bool, isLast: Bool) -> ByteBuffer {
        switch (data, isLast) {
        case (true, true): ByteBuffer(staticString: "\r\n0\r\n\r\n")
        case (true, false): ByteBuffer(staticString: "\r\n")
        case (false, true): ByteBuffer(staticString: "0\r\n\r\n")
        case (false, false): ByteBuffer()
        }
    }

    /// The last chunk with a trailer section (RFC 9112 §7.1.2): `0`, the fields, an empty line.
    public static func lastChunk(trailers: HTTPHeaders, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 64)
        buffer.writeStaticString("0\r\n")
        for (name, value) in trailers where !Self.breaksLine(name) && !Self.breaksLine(value) {
            buffer.writeString(name)
            buffer.writeStaticString(": ")
            buffer.writeString(value)
            buffer.writeStaticString("\r\n")
        }
        buffer.writeStaticString("\r\n")
        return buffer
    }

    private static func breaksLine(_ text: String) -> Bool {
        text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }
    }
}
