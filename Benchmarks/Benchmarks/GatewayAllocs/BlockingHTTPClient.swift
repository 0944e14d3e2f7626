#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A keep-alive HTTP/1.1 client on one blocking socket that allocates nothing per
/// request: the request bytes are built once and the response is read into one
/// fixed buffer. Only `Content-Length` responses are supported (enough for the
/// benchmark's origin). Being allocation-free, it adds nothing to the counts it
/// is used to measure, and it costs the same whether it talks to the origin
/// directly or through the gateway.
final class BlockingHTTPClient {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let fd: Int32
    private let request: [UInt8]
    private let buffer: UnsafeMutableRawBufferPointer
    /// Bytes of `buffer` that hold received data.
    private var filled = 0

    /// Connects to `127.0.0.1:port`; every `get()` sends `request` as is.
    init(port: Int, request: String) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure(description: "connect to 127.0.0.1:\(port): errno \(errno)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        self.fd = fd
        self.request = Array(request.utf8)
        self.buffer = .allocate(byteCount: 256 * 1024, alignment: 16)
    }

    deinit {
        close(fd)
        buffer.deallocate()
    }

    /// Sends the request and reads the whole response; returns the body's length.
    /// Throws unless the status is 200.
    @discardableResult
    func get() throws -> Int {
        try request.withUnsafeBytes { bytes in
            var sent = 0
            while sent < bytes.count {
                let n = send(fd, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
                guard n > 0 else { throw Failure(description: "send: errno \(errno)") }
                sent += n
            }
        }
        var headerEnd = -1
        var total = -1
        while true {
            if headerEnd < 0, let end = findHeaderEnd() {
                headerEnd = end
                let status = statusCode()
                guard status == 200 else { throw Failure(description: "status \(status)") }
                guard let length = contentLength(headerEnd: end) else {
                    throw Failure(description: "response without Content-Length")
                }
                total = end + length
            }
            if total >= 0, filled >= total { break }
            guard filled < buffer.count else { throw Failure(description: "response larger than the buffer") }
            let n = recv(fd, buffer.baseAddress! + filled, buffer.count - filled, 0)
            guard n > 0 else { throw Failure(description: n == 0 ? "connection closed" : "recv: errno \(errno)") }
            filled += n
        }
        let body = total - headerEnd
        // Keep anything past this response (there is none with one request in flight).
        if filled > total {
            memmove(buffer.baseAddress!, buffer.baseAddress! + total, filled - total)
        }
        filled -= total
        return body
    }

    /// The offset just past `\r\n\r\n`, if the head is complete.
    private func findHeaderEnd() -> Int? {
        guard filled >= 4 else { return nil }
        for i in 0...(filled - 4)
        where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i + 4
        }
        return nil
    }

    /// The three digits after `HTTP/1.1 `.
    private func statusCode() -> Int {
        guard filled >= 12 else { return -1 }
        var code = 0
        for i in 9..<12 {
            let digit = Int(buffer[i]) - 48
            guard (0...9).contains(digit) else { return -1 }
            code = code * 10 + digit
        }
        return code
    }

    /// The value of the `Content-Length` header (case-insensitive), scanning the head in place.
    private func contentLength(headerEnd: Int) -> Int? {
        let name: StaticString = "content-length:"
        let nameLength = name.utf8CodeUnitCount
        var lineStart = 0
        while lineStart < headerEnd {
            var lineEnd = lineStart
            while lineEnd < headerEnd, buffer[lineEnd] != 13 { lineEnd += 1 }
            if lineEnd - lineStart > nameLength {
                var matches = true
                for k in 0..<nameLength {
                    var byte = buffer[lineStart + k]
                    if byte >= 65, byte <= 90 { byte += 32 }
                    if byte != name.utf8Start[k] { matches = false; break }
                }
                if matches {
                    var value = 0
                    var sawDigit = false
                    for i in (lineStart + nameLength)..<lineEnd {
                        let byte = buffer[i]
                        if byte == 32 || byte == 9 { continue }
                        guard byte >= 48, byte <= 57 else { return nil }
                        value = value * 10 + Int(byte - 48)
                        sawDigit = true
                    }
                    return sawDigit ? value : nil
                }
            }
            lineStart = lineEnd + 2
        }
        return nil
    }
}
