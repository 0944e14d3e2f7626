import GatewayCore
import GatewayListener
import NIOCore
import NIOHTTP1

/// Raw bytes go through the listener's own request framer; every head it parses
/// is judged by `RequestHeadValidator` and by ``HeadValidationOracle`` (RFC 9112
/// written out plainly): both must agree, the framer's verdict must be the
/// validator's, and an accepted framing must be the one the framer actually
/// used for the body, or a request could be smuggled past the gateway.
enum HeadValidationInvariants {
    static func check(_ input: [UInt8]) throws(InvariantViolation) {
        for message in decode(input) {
            try check(message)
        }
    }

    /// One request as the framer delivered it.
    struct DecodedMessage {
        var head: ClientRequestHead
        /// What the framer made of the head's framing (nil: refused).
        var framing: RequestHeadValidator.BodyFraming?
        var bodyBytes = 0
        var ended = false
    }

    static func decode(_ input: [UInt8]) -> [DecodedMessage] {
        var framer = HTTP1RequestFramer(maxHeadBytes: 16 * 1024)
        framer.append(ByteBuffer(bytes: input))
        var messages: [DecodedMessage] = []
        while let part = try? framer.next() {
            switch part {
            case .head, .headWithBody, .refused:
                guard let head = part.requestHead else { break }
                messages.append(DecodedMessage(head: head, framing: try? part.verdict?.get()))
            case .body(let buffer):
                messages[messages.count - 1].bodyBytes += buffer.readableBytes
            case .end:
                messages[messages.count - 1].ended = true
            }
        }
        return messages
    }

    static func check(_ message: DecodedMessage) throws(InvariantViolation) {
        let head = message.head
        func require(_ condition: Bool, _ text: String) throws(InvariantViolation) {
            try InvariantViolation.require(condition, .headValidation, "\(text): \(head.method) \(head.uri.debugDescription) \(head.version) \(Array(head.headers))")
        }
        let headersAccepted = (try? RequestHeadValidator.checkHeaders(of: head)) != nil
        let expectHeaders = HeadValidationOracle.headersAcceptable(head)
        try require(headersAccepted == expectHeaders, "checkHeaders \(headersAccepted ? "accepts" : "refuses") what RFC 9112 \(expectHeaders ? "allows" : "forbids")")

        let framing = try? RequestHeadValidator.framing(of: head)
        let expected = HeadValidationOracle.framing(head)
        try require(framing == expected, "framing \(framing.map { "\($0)" } ?? "refused"), expected \(expected.map { "\($0)" } ?? "refused")")
        let verdict = headersAccepted ? framing : nil
        try require(message.framing == verdict, "the decoder's verdict \(message.framing.map { "\($0)" } ?? "refused") is not the validator's")

        // The body the decoder read must be the one the validator announces.
        if let framing, message.ended, head.method != .CONNECT {
            switch framing {
            case .none: try require(message.bodyBytes == 0, "no body announced, decoder read \(message.bodyBytes) bytes")
            case .length(let length): try require(message.bodyBytes == length, "length \(length) announced, decoder read \(message.bodyBytes) bytes")
            case .chunked: break
            }
        }
        try TargetParserInvariants.check(uri: head.uri, isConnect: head.method == .CONNECT)
    }
}
