package import GatewayCore
package import NIOCore
package import NIOHTTP1

/// The framing of a response fit for the client, and its head serialized as it
/// goes out (the gateway writes its own bytes: no `HTTPResponseEncoder`, no
/// `HTTPHeaders` copy): `Content-Length` when known, chunked for HTTP/1.1,
/// close-delimited for HTTP/1.0; no body for HEAD, 1xx, 204 and 304;
/// `Connection: close` when the connection ends after it; `Connection: Upgrade`
/// and `Upgrade` on a 101 that switches protocols.
///
/// The fields are the upstream's in their order (the framer read them strictly,
/// so they hold no control byte), less its framing and `Connection`, with `Via`
/// and the framing of this hop.
package struct ResponseFraming {
    /// The head's bytes: status line, fields, the empty line.
    package let head: ByteBuffer
    /// No body goes out, whatever the upstream sends.
    package let bodyless: Bool
    /// The connection stays open after this response.
    package let keepAlive: Bool
    /// Body parts go out as chunks.
    package let chunked: Bool

    package init(
        status: HTTPResponseStatus,
        fields: ResponseFields,
        declaredLength: Int?,
        requestMethod: HTTPMethod,
        requestVersion: HTTPVersion,
        keepAlive: Bool,
        via: String? = nil,
        upgrade: String? = nil,
        allocator: ByteBufferAllocator = ByteBufferAllocator(),
        spare: consuming ByteBuffer? = nil
    ) {
        let code = status.code
        let bodyless = requestMethod == .HEAD || code == 204 || code == 304 || (100..<200).contains(code)
        var keepAlive = keepAlive
        var chunked = false
        var length = LengthPlacement()
        if bodyless {
            length.dropped = code == 204 || (100..<200).contains(code)
        } else if let declared = declaredLength {
            length.own = declared
        } else if requestVersion.major == 1 && requestVersion.minor >= 1 {
            chunked = true
        } else {
            keepAlive = false
        }

        let capacity: Int
        switch fields.storage {
        case .headers(let headers): capacity = 256 + headers.count * 32
        case .lines(let lines, _): capacity = 256 + lines.readableBytes
        }
        var head = ByteBuffer.reusing(&spare, capacity: capacity, allocator: allocator)
        head.writeStaticString(requestVersion.minor == 0 ? "HTTP/1.0 " : "HTTP/1.1 ")
        head.writeDecimal(Int(code))
        head.writeInteger(UInt8(ascii: " "))
        head.writeString(status.reasonPhrase)
        head.writeStaticString("\r\n")
        switch fields.storage {
        case .headers(let headers):
            for (name, value) in headers {
                if HopByHopHeaders.equalsIgnoringCase(name, "transfer-encoding") || HopByHopHeaders.equalsIgnoringCase(name, "connection") {
                    continue
                }
                if length.passesOn(isContentLength: HopByHopHeaders.equalsIgnoringCase(name, "content-length"), head: &head) {
                    Self.writeField(&head, name: name, value: value)
                }
            }
        case .lines(let lines, let dropped):
            // The upstream's lines as they came (the framer checked them and
            // marked the hop-by-hop ones): no string per field, and each run
            // of lines passed on unchanged copied in one write.
            var run = 0..<0
            ResponseFields.forEachLine(of: lines, dropped: dropped) { raw, line in
                let isContentLength = HTTP1HeadLines.equalsIgnoringCase(raw, from: line.start, to: line.colon, "content-length")
                if !isContentLength, line.start == run.upperBound, !run.isEmpty {
                    run = run.lowerBound..<(line.end + 2)
                    return
                }
                if !run.isEmpty { head.writeBytes(UnsafeRawBufferPointer(rebasing: raw[run])) }
                run = 0..<0
                if length.passesOn(isContentLength: isContentLength, head: &head) { run = line.start..<(line.end + 2) }
            }
            if !run.isEmpty {
                _ = lines.withUnsafeReadableBytes { raw in head.writeBytes(UnsafeRawBufferPointer(rebasing: raw[run])) }
            }
        }
        if let via { Self.writeField(&head, name: "Via", value: via) }
        if let own = length.own, !length.dropped { Self.writeContentLength(&head, own) }
        if chunked { head.writeStaticString("Transfer-Encoding: chunked\r\n") }
        if let upgrade {
            // A 101 to a handshake: the protocol switched to, for this hop too.
            head.writeStaticString("Connection: Upgrade\r\nUpgrade: ")
            head.writeString(upgrade)
            head.writeStaticString("\r\n")
        } else if !keepAlive {
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

    /// A head whose fields are `HTTPHeaders` (the gateway's own responses).
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
        self.init(
            status: status, fields: ResponseFields(headers), declaredLength: declaredLength, requestMethod: requestMethod,
            requestVersion: requestVersion, keepAlive: keepAlive, via: via, allocator: allocator
        )
    }

    /// What becomes of the upstream's `Content-Length`: kept as it is (HEAD,
    /// 304), dropped (204, 1xx), or ours in the place of the first one.
    private struct LengthPlacement {
        var own: Int?
        /// No more upstream `Content-Length` goes out (ours is written, or none may be).
        var dropped = false

        /// Whether an upstream field goes out as it is; writes ours in the first one's place.
        mutating func passesOn(isContentLength: Bool, head: inout ByteBuffer) -> Bool {
            guard isContentLength, !dropped else { return !isContentLength }
            guard let own else { return true }
            ResponseFraming.writeContentLength(&head, own)
            dropped = true
            return false
        }
    }

    fileprivate static func writeContentLength(_ head: inout ByteBuffer, _ length: Int) {
        head.writeStaticString("Content-Length: ")
        head.writeDecimal(length)
        head.writeStaticString("\r\n")
    }

    fileprivate static func writeField(_ head: inout ByteBuffer, name: String, value: String) {
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
