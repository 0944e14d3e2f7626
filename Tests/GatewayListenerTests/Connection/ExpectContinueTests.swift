import GatewayCore
import GatewayTesting
@testable import GatewayListener
import NIOHTTP1
import Testing

/// An HTTP/1.0 client never gets `100 Continue` (RFC 9110 §10.1.1).
struct ExpectContinueTests {
    func head(_ headers: HTTPHeaders, version: HTTPVersion = .http1_1) -> ClientRequestHead {
        ClientRequestHead(version: version, method: .POST, uri: "http://h/", headers: RequestFields.lines(headers))
    }

    @Test func http10NeverExpectsContinue() {
        #expect(head(["Expect": "100-continue"]).expectsContinue)
        #expect(head(["expect": "100-Continue"]).expectsContinue)
        #expect(!head(["Expect": "100-continue"], version: .http1_0).expectsContinue)
        #expect(!head(["Expect": "100-continue"], version: HTTPVersion(major: 0, minor: 9)).expectsContinue)
        #expect(!head([:]).expectsContinue)
    }
}
