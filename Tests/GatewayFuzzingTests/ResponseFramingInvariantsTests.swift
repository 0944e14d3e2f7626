import Testing
@testable import GatewayFuzzing

/// The response-framing fuzz target frames what it is given (its checks are not vacuous).
struct ResponseFramingInvariantsTests {
    @Test func twoKeepAliveResponsesFrameAllAtOnceAndInPieces() throws {
        let stream = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: b\r\n\r\n5\r\nhello\r\n0\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n".utf8)
        let (whole, heads) = ResponseFramingInvariants.frame(stream, isHEAD: false, pieceSize: 0)
        #expect(heads.count == 2)
        #expect(whole.responses.map(\.status) == [200, 204])
        #expect(whole.responses.first?.body == Array("hello".utf8))
        #expect(whole.responses.first?.fields == ["X-A: b"], "framing fields are not end-to-end")
        #expect(whole.responses.allSatisfy { $0.ended })
        #expect(ResponseFramingInvariants.frame(stream, isHEAD: false, pieceSize: 3).0 == whole)
        try ResponseFramingInvariants.check([0x06] + stream)
    }

    @Test func aFramingErrorIsTheSameWhateverThePieces() {
        let stream = Array("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        let whole = ResponseFramingInvariants.frame(stream, isHEAD: false, pieceSize: 0).0
        #expect(whole.error != nil)
        #expect(ResponseFramingInvariants.frame(stream, isHEAD: false, pieceSize: 1).0 == whole)
    }
}
