public import NIOCore

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
}
