import GatewayCore
import NIOCore
import NIOHTTP1

/// The framing of a response fit for the client, and its head serialized as it
/// goes out (the gateway writes its own bytes: no `HTTPResponseEncoder`, no
/// `HTTPHeaders` copy): `Content-Length` when known, chunked for HTTP/1.1,
/// close-delimited for HTTP/1.0; no body for HEAD, 1xx, 204 and 304;
/// `Connection: close` when the connection ends after it.
///
/// The fields are the upstream's in their order (the framer read them strictly,
/// so they hold no control byte), less its framing and `Connection`, with `Via`
/// and the framing of this hop.
struct ResponseFraming {
    /// The head's bytes: status line, fields, the empty line.
    let head: ByteBuffer
    /// No body goes out, whatever the upstream sends.
    let bodyless: Bool
    /// The connection stays open after this response.
    let keepAlive: Bool
    /// Body parts go out as chunks.
    let chunked: Bool

    init(
        status: HTTPResponseStatus,
        headers: HTTPHeaders,
        declaredLength: Int?,
        requestMethod: HTTPMethod,
        requestVersion: HTTPVersion,
        keepAlive: Bool,
        via: String? = nil,
        allocator: ByteBufferAllocator = ByteBufferAllocator()
    ) {
        let code = status.code
        let bodyless = requestMethod == .HEAD || code == 204 || code == 304 || (100..<200).contains(code)
        var keepAlive = keepAlive
        var chunked = false
        // What becomes of the upstream's `Content-Length`: kept as it is (HEAD, 304), dropped (204, 1xx), or ours.
        var ownLength: Int?
        var dropLength = false
        if bodyless {
            dropLength = code == 204 || (100..<200).contains(code)
        } else if let length = declaredLength {
            ownLength = length
        } else if requestVersion.major == 1 && requestVersion.minor >= 1 {
            chunked = true
        } else {
            keepAlive = false
        }

        var head = allocator.buffer(capacity: 256 + headers.count * 32)
        head.writeStaticString(requestVersion.minor == 0 ? "HTTP/1.0 " : "HTTP/1.1 ")
        head.writeString(String(code))
        head.writeInteger(UInt8(ascii: " "))
        head.writeString(status.reasonPhrase)
        head.writeStaticString("\r\n")
        for (name, value) in headers {
            if HopByHopHeaders.equalsIgnoringCase(name, "content-length") {
                // Ours in the place of the first one, the others dropped.
                if dropLength { continue }
                if let length = ownLength {
                    Self.writeField(&head, name: "Content-Length", value: String(length))
                    dropLength = true
                    continue
                }
            } else if HopByHopHeaders.equalsIgnoringCase(name, "transfer-encoding") || HopByHopHeaders.equalsIgnoringCase(name, "connection") {
                continue
            }
            Self.writeField(&head, name: name, value: value)
        }
        if let via { Self.writeField(&head, name: "Via", value: via) }
        if let length = ownLength, !dropLength { Self.writeField(&head, name: "Content-Length", value: String(length)) }
        if chunked { head.writeStaticString("Transfer-Encoding: chunked\r\n") }
        if !keepAlive {
            head.writeStaticString("Connection: close\r\n")
        } else if requestVersion == .http1_0 {
            head.writeStaticString("Connection: keep-alive\r\n")
        }
        head.writeStaticString("\r\n")
        self.head = head
        self.bodyless = bodyless
        self.keepAlive = keepAlive
        self.chunked = chunked
    }

    private static func writeField(_ head: inout ByteBuffer, name: String, value: String) {
        head.writeString(name)
        head.writeStaticString(": ")
        head.writeString(value)
        head.writeStaticString("\r\n")
    }
}

extension ResponseFraming {
    /// A head with no fields (`100 Continue`, `200 Connection Established`).
    static func bareHead(version: HTTPVersion, code: Int, reason: String) -> ByteBuffer {
        var head = ByteBuffer()
        head.writeString("HTTP/\(version.major).\(version.minor) \(code) \(reason)\r\n\r\n")
        return head
    }
}
