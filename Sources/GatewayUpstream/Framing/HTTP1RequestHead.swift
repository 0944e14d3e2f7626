import GatewayCore
import NIOCore
import NIOHTTP1

/// A request head for the upstream, serialized as it is built: the gateway's own
/// HTTP/1.1 request writing, in place of NIOHTTP1's
/// `HTTPRequestEncoder` and its headers validator, with no `HTTPHeaders` copy in
/// between and no `NIOAny` per part.
///
/// Every field is checked as it is written, as NIOHTTP1's outbound validator did:
/// a name must be a token and a value must hold no control byte but HTAB (RFC 9110
/// §5.5), so that no value (an injected credential, a token from a token endpoint)
/// can split the head. A request body whose length is not known goes chunked, and
/// ``isChunked`` tells the exchange to frame its parts.
struct HTTP1RequestHead {
    /// A field that would corrupt the head; the message names the field, never its value.
    struct InvalidField: Error, Equatable {
        /// The field's name when it is a token (safe to print), else nil.
        let name: String?
    }

    /// The head's bytes: request line and fields, ended by ``end()``.
    private(set) var bytes: ByteBuffer
    let isHEAD: Bool
    /// The body goes with `Transfer-Encoding: chunked`: each part needs its chunk framing.
    private(set) var isChunked = false

    /// Starts a head with its request line. `target` must be origin-form (or
    /// absolute-form); a control byte or a space in it is refused. A `spare`
    /// buffer (the connection's previous head, written) is cleared and written
    /// again: no allocation when nothing else holds it any more.
    init(method: HTTPMethod, target: String, allocator: ByteBufferAllocator = ByteBufferAllocator(), spare: consuming ByteBuffer? = nil) throws(InvalidField) {
        isHEAD = method == .HEAD
        bytes = ByteBuffer.reusing(&spare, capacity: 512, allocator: allocator)
        bytes.writeString(method.rawValue)
        bytes.writeInteger(UInt8(ascii: " "))
        let targetStart = bytes.writerIndex
        bytes.writeString(target)
        guard targetStart < bytes.writerIndex, Self.all(in: bytes, from: targetStart, satisfy: Self.isTargetByte) else {
            throw InvalidField(name: nil)
        }
        bytes.writeStaticString(" HTTP/1.1\r\n")
    }

    /// Appends a field, checking its name and value.
    mutating func add(name: String, value: String) throws(InvalidField) {
        let nameStart = bytes.writerIndex
        bytes.writeString(name)
        guard nameStart < bytes.writerIndex, Self.all(in: bytes, from: nameStart, satisfy: HTTPFieldBytes.isTokenByte) else {
            bytes.moveWriterIndex(to: nameStart)
            throw InvalidField(name: nil)
        }
        bytes.writeStaticString(": ")
        let valueStart = bytes.writerIndex
        bytes.writeString(value)
        let valueValid = bytes.withUnsafeReadableBytes { raw in
            // Eight bytes a step: values (tokens, cookies, user agents) are the long part of a head.
            !HeadBytes.containsNonFieldValueByte(raw, from: valueStart - bytes.readerIndex, to: raw.count)
        }
        guard valueValid else {
            bytes.moveWriterIndex(to: nameStart)
            throw InvalidField(name: name)
        }
        bytes.writeStaticString("\r\n")
    }

    /// Appends a field the request parser read and checked (a token name, a
    /// value with no control byte but HTAB), as it is: `name: value` and CRLF
    /// copied in one write (four writes to the buffer, each with its checks,
    /// cost more than the bytes of an app's ten fields).
    mutating func addChecked(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let count = name.count + value.count + 4
        bytes.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { out in
            UnsafeMutableRawBufferPointer(rebasing: out[0..<name.count]).copyMemory(from: name)
            out[name.count] = UInt8(ascii: ":")
            out[name.count + 1] = UInt8(ascii: " ")
            let valueStart = name.count + 2
            UnsafeMutableRawBufferPointer(rebasing: out[valueStart..<valueStart + value.count]).copyMemory(from: value)
            out[count - 2] = UInt8(ascii: "\r")
            out[count - 1] = UInt8(ascii: "\n")
            return count
        }
    }

    /// Appends a field given as bytes, checking its name and value as ``add(name:value:)`` does.
    mutating func add(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(InvalidField) {
        guard !name.isEmpty, name.allSatisfy(HTTPFieldBytes.isTokenByte) else { throw InvalidField(name: nil) }
        guard !HeadBytes.containsNonFieldValueByte(value, from: 0, to: value.count) else {
            throw InvalidField(name: String(decoding: name, as: UTF8.self))
        }
        addChecked(name: name, value: value)
    }

    /// Appends `Transfer-Encoding: chunked`: the body's length is not known.
    mutating func addChunkedFraming() {
        bytes.writeStaticString("Transfer-Encoding: chunked\r\n")
        isChunked = true
    }

    /// Ends the field section.
    mutating func end() {
        bytes.writeStaticString("\r\n")
    }

    /// Whether every byte written from `start` on satisfies `isValid`.
    private static func all(in bytes: ByteBuffer, from start: Int, satisfy isValid: (UInt8) -> Bool) -> Bool {
        bytes.withUnsafeReadableBytes { raw in
            raw[(start - bytes.readerIndex)...].allSatisfy(isValid)
        }
    }

    /// A request-target byte: VCHAR or obs-text, no space, no control.
    private static func isTargetByte(_ byte: UInt8) -> Bool {
        byte > 32 && byte != 127
    }
}
