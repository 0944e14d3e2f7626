/// What an HTTP/2 message's `content-length` still promises, as its DATA
/// arrive: the body must be exactly that long (RFC 9113 §8.1.1; more DATA, or
/// an end short of it, makes the message malformed). The gateway holds both
/// sides to it itself (a client's request in `ClientHTTP2Stream`, an origin's
/// response in `UpstreamHTTP2StreamStateMachine`): NIOHTTP2's own check, which
/// read every field section again both ways, is off. Without a declared length
/// any body goes.
package struct HTTP2DeclaredLength: Equatable, Sendable {
    /// The bytes still promised (nil: no length was declared).
    package private(set) var left: Int?

    package init(_ declared: Int?) {
        left = declared
    }

    /// A DATA frame of `length` bytes (padding not counted): false when it
    /// goes beyond the declared length.
    package mutating func received(_ length: Int) -> Bool {
        guard let remaining = left else { return true }
        guard length <= remaining else { return false }
        left = remaining - length
        return true
    }

    /// Whether the body may end here: all the declared bytes came (or none were declared).
    package var mayEnd: Bool { (left ?? 0) == 0 }
}
