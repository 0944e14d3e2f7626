import GatewayTesting
import GatewayCore
@testable import GatewayListener
import NIOHTTP1
import Testing

/// Transfer codings the gateway cannot pass on faithfully get
/// 501, and a CONNECT with a body gets 400.
struct RequestHeadRefusalTests {
    func head(_ headers: HTTPHeaders, version: HTTPVersion = .http1_1) -> ClientRequestHead {
        head(.POST, headers, version: version)
    }

    func head(_ method: HTTPMethod, _ headers: HTTPHeaders, version: HTTPVersion = .http1_1) -> ClientRequestHead {
        ClientRequestHead(version: version, method: method, uri: method == .CONNECT ? "h:443" : "http://h/", headers: RequestFields.lines(headers))
    }

    func code(_ head: ClientRequestHead) -> GatewayError.Code? {
        do {
            _ = try RequestHeadValidator.framing(of: head)
            return nil
        } catch {
            return error.code
        }
    }

    @Test(arguments: [
        HTTPHeaders([("Transfer-Encoding", "gzip, chunked")]),
        HTTPHeaders([("Transfer-Encoding", "gzip"), ("Transfer-Encoding", "chunked")]),
        HTTPHeaders([("Transfer-Encoding", "deflate ,chunked")]),
    ])
    func aCodingBeforeChunkedIsNotImplemented(_ headers: HTTPHeaders) {
        #expect(code(head(headers)) == .unsupportedTransferCoding)
        #expect(GatewayError.Code.unsupportedTransferCoding.status.code == 501)
    }

    @Test func plainChunkedIsStillFine() throws {
        #expect(try RequestHeadValidator.framing(of: head(["Transfer-Encoding": "Chunked"])) == .chunked)
        #expect(code(head(["Transfer-Encoding": "chunked, gzip"])) == .requestSmuggling)
    }

    @Test func connectWithABodyIsABadRequest() throws {
        #expect(code(head(.CONNECT, ["Content-Length": "5"])) == .badRequest)
        #expect(code(head(.CONNECT, ["Transfer-Encoding": "chunked"])) == .badRequest)
        #expect(try RequestHeadValidator.framing(of: head(.CONNECT, ["Content-Length": "0"])) == .none)
        #expect(try RequestHeadValidator.framing(of: head(.CONNECT, [:])) == .none)
    }

    /// Found by the head-validation fuzz target: an empty
    /// `Transfer-Encoding:` (or `Content-Length:`) has no values in NIO's
    /// canonical form, so the request passed as bodiless while the field,
    /// which a next hop may frame by, was still there.
    @Test func anEmptyFramingFieldIsRefused() {
        #expect(code(head(HTTPHeaders([("Host", "h"), ("Transfer-Encoding", "")]))) == .requestSmuggling)
        #expect(code(head(HTTPHeaders([("Host", "h"), ("Transfer-Encoding", " , ")]))) == .requestSmuggling)
        #expect(code(head(HTTPHeaders([("Host", "h"), ("Transfer-Encoding", ""), ("Content-Length", "0")]))) == .requestSmuggling)
        #expect(code(head(HTTPHeaders([("Host", "h"), ("Content-Length", "")]))) == .badRequest)
    }
}
