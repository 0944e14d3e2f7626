import GatewayCore
@testable import GatewayListener
import NIOCore
import NIOHTTP1
import Testing

/// Response fields kept as the upstream's lines are written to the client as
/// the same fields given as `HTTPHeaders` would be (byte for byte when the
/// upstream wrote them as `Name: value`): lines marked dropped never go out,
/// the gateway's `Content-Length` takes the first one's place, HEAD and 304
/// keep the upstream's, 204 loses it.
@Suite struct ResponseFramingLinesTests {
    /// The upstream's field lines; line 1 (`Connection`) and line 4 (`Keep-Alive`) are hop-by-hop.
    static let lines = [
        "Content-Type: text/plain", "Connection: keep-alive", "content-length: 5", "ETag: \"x\"", "Keep-Alive: timeout=5",
        "Content-Length: 5", "X-Empty: ",
    ]
    static let dropped: UInt64 = 0b10010

    static var fields: ResponseFields {
        ResponseFields(lines: ByteBuffer(string: lines.map { $0 + "\r\n" }.joined()), dropped: dropped)
    }

    /// The same fields as `HTTPHeaders`, as the parser would have made them.
    static var headers: HTTPHeaders {
        HTTPHeaders([("Content-Type", "text/plain"), ("content-length", "5"), ("ETag", "\"x\""), ("Content-Length", "5"), ("X-Empty", "")])
    }

    struct Case: Sendable, CustomStringConvertible {
        var method: HTTPMethod
        var status: HTTPResponseStatus
        var declaredLength: Int?
        var version: HTTPVersion
        var description: String { "\(method) \(status.code) \(declaredLength.map(String.init) ?? "-") \(version)" }
    }

    static let cases = [
        Case(method: .GET, status: .ok, declaredLength: 5, version: .http1_1),
        Case(method: .HEAD, status: .ok, declaredLength: 5, version: .http1_1),
        Case(method: .GET, status: .noContent, declaredLength: nil, version: .http1_1),
        Case(method: .GET, status: .notModified, declaredLength: 5, version: .http1_1),
        Case(method: .GET, status: .ok, declaredLength: nil, version: .http1_1),
        Case(method: .GET, status: .ok, declaredLength: nil, version: .http1_0),
    ]

    @Test(arguments: cases)
    func linesGoOutAsTheSameFieldsWouldAsHeaders(_ testCase: Case) {
        func framing(_ fields: ResponseFields) -> ResponseFraming {
            ResponseFraming(
                status: testCase.status, fields: fields, declaredLength: testCase.declaredLength, requestMethod: testCase.method,
                requestVersion: testCase.version, keepAlive: true, via: "1.1 gateway"
            )
        }
        let fromLines = framing(Self.fields)
        let fromHeaders = framing(ResponseFields(Self.headers))
        #expect(String(buffer: fromLines.head) == String(buffer: fromHeaders.head))
        #expect(fromLines.keepAlive == fromHeaders.keepAlive)
        #expect(fromLines.chunked == fromHeaders.chunked)
        let text = String(buffer: fromLines.head)
        #expect(!text.contains("Keep-Alive"))
        #expect(!text.contains("timeout=5"))
    }

    @Test func theGatewaysLengthTakesTheFirstOnesPlaceAndTheLinesKeepTheirBytes() {
        let lines = ByteBuffer(string: "Server:\torigin  \r\nConnection: keep-alive\r\ncontent-length:  5 \r\nX-Empty:\r\n")
        let fields = ResponseFields(lines: lines, dropped: 0b10)
        let get = ResponseFraming(status: .ok, fields: fields, declaredLength: 5, requestMethod: .GET, requestVersion: .http1_1, keepAlive: true)
        #expect(String(buffer: get.head) == "HTTP/1.1 200 OK\r\nServer:\torigin  \r\nContent-Length: 5\r\nX-Empty:\r\n\r\n")
        let head = ResponseFraming(status: .ok, fields: fields, declaredLength: 5, requestMethod: .HEAD, requestVersion: .http1_1, keepAlive: true)
        #expect(String(buffer: head.head) == "HTTP/1.1 200 OK\r\nServer:\torigin  \r\ncontent-length:  5 \r\nX-Empty:\r\n\r\n")
    }

    /// Runs of lines passed on go out in one copy each: whichever lines are
    /// dropped (first, last, several in a row, all), the head is the one the
    /// same fields as `HTTPHeaders` make.
    @Test(arguments: [UInt64(0), 0b1, 0b10_0000_0000, 0b11_1111_1111, 0b01_0110_1001, 0b10_1001_0110, 0b00_1110_0111])
    func everyDropMaskGoesOutAsTheSameFields(_ dropped: UInt64) {
        let lines = (0..<10).map { $0 == 4 ? "Content-Length: 3" : "X-Line-\($0): value \($0)" }
        let kept = lines.indices.filter { dropped & (1 << UInt64($0)) == 0 }.map { index -> (String, String) in
            let parts = lines[index].split(separator: ":", maxSplits: 1)
            return (String(parts[0]), String(parts[1].dropFirst()))
        }
        for declaredLength in [3, nil] as [Int?] {
            func framing(_ fields: ResponseFields) -> String {
                String(buffer: ResponseFraming(
                    status: .ok, fields: fields, declaredLength: declaredLength, requestMethod: .GET,
                    requestVersion: .http1_1, keepAlive: true, via: "1.1 gateway"
                ).head)
            }
            let fromLines = framing(ResponseFields(lines: ByteBuffer(string: lines.map { $0 + "\r\n" }.joined()), dropped: dropped))
            #expect(fromLines == framing(ResponseFields(HTTPHeaders(kept))))
        }
    }
}
