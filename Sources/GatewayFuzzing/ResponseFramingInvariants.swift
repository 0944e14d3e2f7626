import GatewayCore
import GatewayListener
import GatewayUpstream
import NIOCore
import NIOHTTP1

/// Raw bytes as an upstream's responses on one connection, through the
/// gateway's response framer (its own HTTP/1 framing, fields kept as
/// bytes) and on to the head the client gets (``ResponseFraming``).
///
/// The first byte picks the request method (bit 0: HEAD) and how the bytes
/// arrive (bits 1–5: pieces of that many bytes; 0: all at once). Properties:
/// - the same bytes framed all at once and piece by piece make the same
///   responses (status, fields, framing, body bytes, ends) and the same error;
/// - the fields kept for the client hold no hop-by-hop field, and every one is
///   a token name with a value free of CR, LF and NUL;
/// - the head written for the client frames again, as the same status with the
///   same end-to-end fields in order, the gateway's `Via` last, and the body's
///   framing kept (its length, or chunked);
/// - a response framed by its length that ends carries exactly that many bytes.
enum ResponseFramingInvariants {
    /// One response as framed: everything the exchange acts on.
    struct Framed: Equatable {
        var status: UInt
        var fields: [String]
        var declaredLength: Int?
        var keepAlive: Bool
        var untilClose: Bool
        var body: [UInt8] = []
        var ended = false
    }

    struct Outcome: Equatable {
        var responses: [Framed] = []
        var error: HTTP1FramingError?
    }

    /// A small head limit, so that inputs reach it.
    static let maxHeadBytes = 2048
    /// Responses framed per input at most (one connection's keep-alive exchanges).
    static let maxResponses = 8

    static func check(_ input: [UInt8]) throws(InvariantViolation) {
        guard let options = input.first else { return }
        let stream = Array(input.dropFirst())
        let isHEAD = options & 1 == 1
        let pieceSize = Int(options >> 1) & 0x1F
        let (whole, heads) = frame(stream, isHEAD: isHEAD, pieceSize: 0)
        if pieceSize > 0 {
            let (pieces, _) = frame(stream, isHEAD: isHEAD, pieceSize: pieceSize)
            try require(pieces == whole, "framed in pieces of \(pieceSize): \(pieces) all at once: \(whole)")
        }
        for (index, head) in heads.enumerated() {
            try checkFields(head)
            try checkClientHead(head, isHEAD: isHEAD)
            let response = whole.responses[index]
            if response.ended, !response.untilClose, let length = response.declaredLength, !isHEAD,
                response.status != 204, response.status != 304
            {
                try require(response.body.count == length, "Content-Length \(length) but \(response.body.count) body bytes")
            }
        }
    }

    static func frame(_ stream: [UInt8], isHEAD: Bool, pieceSize: Int) -> (Outcome, [HTTP1ResponseFramer.Head]) {
        var framer = HTTP1ResponseFramer(maxHeadBytes: maxHeadBytes)
        framer.expectResponse(isHEAD: isHEAD)
        var outcome = Outcome()
        var heads: [HTTP1ResponseFramer.Head] = []
        var done = false
        func take(_ event: HTTP1ResponseFramer.Event) {
            switch event {
            case .head(let head):
                heads.append(head)
                outcome.responses.append(Framed(
                    status: head.status.code, fields: head.fields.headers.map { "\($0.name): \($0.value)" },
                    declaredLength: head.declaredLength, keepAlive: head.keepAlive, untilClose: head.untilClose
                ))
            case .body(let bytes):
                outcome.responses[outcome.responses.count - 1].body += bytes.readableBytesView
            case .end:
                outcome.responses[outcome.responses.count - 1].ended = true
                // The connection carries the next exchange only when the response allows it.
                if outcome.responses.last!.keepAlive && outcome.responses.count < maxResponses {
                    framer.expectResponse(isHEAD: isHEAD)
                } else {
                    done = true
                }
            }
        }
        let step = pieceSize > 0 ? pieceSize : max(1, stream.count)
        var offset = 0
        while offset < stream.count, !done, outcome.error == nil {
            let end = min(stream.count, offset + step)
            framer.append(ByteBuffer(bytes: stream[offset..<end]))
            offset = end
            do {
                while !done, let event = try framer.next() { take(event) }
            } catch {
                outcome.error = error
            }
        }
        if !done, outcome.error == nil, let event = framer.inputClosed() { take(event) }
        return (outcome, heads)
    }

    static func checkFields(_ head: HTTP1ResponseFramer.Head) throws(InvariantViolation) {
        for (name, value) in head.fields.headers {
            try require(!HopByHopHeaders.isAlwaysHopByHop(name), "hop-by-hop field \(name) kept for the client")
            try require(!name.isEmpty && name.utf8.allSatisfy(HTTPFieldBytes.isTokenByte), "field name \(name.debugDescription) is not a token")
            try require(!value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }, "field \(name) has CR, LF or NUL in its value")
        }
    }

    static func checkClientHead(_ head: HTTP1ResponseFramer.Head, isHEAD: Bool) throws(InvariantViolation) {
        let framing = ResponseFraming(
            status: head.status, fields: head.fields, declaredLength: head.declaredLength,
            requestMethod: isHEAD ? .HEAD : .GET, requestVersion: .http1_1, keepAlive: head.keepAlive, via: "1.1 gateway"
        )
        var again = HTTP1ResponseFramer(maxHeadBytes: 1 << 20)
        again.expectResponse(isHEAD: isHEAD)
        again.append(framing.head)
        let event: HTTP1ResponseFramer.Event?
        do {
            event = try again.next()
        } catch {
            throw InvariantViolation(.responseFraming, "the head written for the client does not frame: \(error); \(String(buffer: framing.head).debugDescription)")
        }
        guard case .head(let written) = event else {
            throw InvariantViolation(.responseFraming, "the head written for the client is incomplete: \(String(buffer: framing.head).debugDescription)")
        }
        try require(written.status.code == head.status.code, "status \(head.status.code) written as \(written.status.code)")
        let framingNames = ["content-length", "transfer-encoding", "connection", "via"]
        func endToEnd(_ fields: ResponseFields) -> [String] {
            fields.headers.filter { field in !framingNames.contains { HopByHopHeaders.equalsIgnoringCase(field.name, $0) } }
                .map { "\($0.name): \($0.value)" }
        }
        try require(endToEnd(written.fields) == endToEnd(head.fields), "fields \(endToEnd(head.fields)) written as \(endToEnd(written.fields))")
        let vias = written.fields.headers.filter { HopByHopHeaders.equalsIgnoringCase($0.name, "via") }
        try require(vias.last?.value == "1.1 gateway", "the gateway's Via is not the last Via: \(vias)")
        guard !framing.bodyless else { return }
        if let length = head.declaredLength {
            try require(written.declaredLength == length, "Content-Length \(length) written as \(String(describing: written.declaredLength))")
        } else {
            try require(framing.chunked && written.declaredLength == nil && !written.untilClose, "a body of unknown length is not written chunked")
        }
    }

    private static func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(InvariantViolation) {
        try InvariantViolation.require(condition, .responseFraming, message())
    }
}
