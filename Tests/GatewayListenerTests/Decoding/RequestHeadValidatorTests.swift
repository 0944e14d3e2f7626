import GatewayTesting
import GatewayCore
@testable import GatewayListener
import NIOHTTP1
import Testing

struct RequestHeadValidatorTests {
    func head(_ headers: HTTPHeaders, version: HTTPVersion = .http1_1) -> ClientRequestHead {
        ClientRequestHead(version: version, method: .POST, uri: "http://h/", headers: RequestFields.lines(headers))
    }

    @Test func framing() throws {
        #expect(try RequestHeadValidator.framing(of: head([:])) == .none)
        #expect(try RequestHeadValidator.framing(of: head(["Content-Length": "0"])) == .none)
        #expect(try RequestHeadValidator.framing(of: head(["Content-Length": "12"])) == .length(12))
        #expect(try RequestHeadValidator.framing(of: head(["Content-Length": "12", "Content-Length": "12"])) == .length(12))
        #expect(try RequestHeadValidator.framing(of: head(["Transfer-Encoding": "chunked"])) == .chunked)
    }

    @Test(arguments: [
        HTTPHeaders([("Content-Length", "3"), ("Transfer-Encoding", "chunked")]),
        HTTPHeaders([("Content-Length", "3"), ("Content-Length", "4")]),
        HTTPHeaders([("Transfer-Encoding", "gzip")]),
        HTTPHeaders([("Transfer-Encoding", "chunked, gzip")]),
        HTTPHeaders([("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")]),
        HTTPHeaders([("Content-Length", "-1")]),
        HTTPHeaders([("Content-Length", "1e3")]),
    ])
    func ambiguousFramingIsRefused(_ headers: HTTPHeaders) {
        #expect(throws: (any Error).self) { try RequestHeadValidator.framing(of: head(headers)) }
    }

    @Test func transferEncodingInHTTP10IsRefused() {
        #expect(throws: (any Error).self) {
            try RequestHeadValidator.framing(of: head(["Transfer-Encoding": "chunked"], version: .http1_0))
        }
    }
}
