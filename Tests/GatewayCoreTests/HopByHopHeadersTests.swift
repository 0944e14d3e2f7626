import GatewayCore
import NIOHTTP1
import Testing

struct HopByHopHeadersTests {
    @Test func removesHopByHopAndConnectionNamedHeadersKeepingOrderAndDuplicates() {
        var headers: HTTPHeaders = [
            "A": "1", "Connection": "keep-alive, X-Private", "X-Private": "p", "Keep-Alive": "timeout=5",
            "B": "2", "TE": "trailers", "Transfer-Encoding": "chunked", "Upgrade": "h2c", "Trailer": "X",
            "Proxy-Authorization": "Basic x", "Proxy-Connection": "keep-alive", "A": "3",
        ]
        HopByHopHeaders.removeAll(from: &headers)
        #expect(headers.map { "\($0.name)=\($0.value)" } == ["A=1", "B=2", "A=3"])
    }

    @Test func connectionTokensAreMatchedWithoutCaseAndCloseNamesNoField() {
        var headers: HTTPHeaders = [
            "Close": "a field named close stays", "X-Secret": "s", "connection": " Close ,x-secret,, KEEP-ALIVE ", "Date": "d",
            "CONNECTION": "keep-alive",
        ]
        HopByHopHeaders.removeAll(from: &headers)
        #expect(headers.map(\.name) == ["Close", "Date"])
    }

    @Test func onlyConnectionKeepAliveIsRemovedFromAnOrdinaryResponse() {
        var headers: HTTPHeaders = ["Server": "nginx", "Content-Length": "5", "Connection": "keep-alive", "ETag": "e"]
        HopByHopHeaders.removeAll(from: &headers)
        #expect(headers.map(\.name) == ["Server", "Content-Length", "ETag"])
    }

    @Test func leavesCleanHeadersAlone() {
        var headers: HTTPHeaders = ["Accept": "*/*", "X-Dup": "a", "X-Dup": "b"]
        HopByHopHeaders.removeAll(from: &headers)
        #expect(headers.count == 3)
        HopByHopHeaders.addVia(to: &headers, version: .http1_1, pseudonym: "gateway")
        #expect(headers["Via"] == ["1.1 gateway"])
    }
}

struct HostPatternTests {
    @Test(arguments: [
        ("api.example.com", "api.example.com", true), ("api.example.com", "API.Example.com", true),
        ("api.example.com", "x.api.example.com", false), ("*.example.com", "a.example.com", true),
        ("*.example.com", "a.b.example.com", true), ("*.example.com", "example.com", false),
        ("*.example.com", "badexample.com", false), ("*", "anything.test", true),
    ])
    func matching(_ pattern: String, _ host: String, _ expected: Bool) throws {
        let p = try #require(HostPattern(pattern))
        #expect(p.matches(host) == expected)
    }

    @Test(arguments: ["", "a*.example.com", "*.", "api.*.com", "has space", "a/b"])
    func malformedPatternsAreRejected(_ text: String) {
        #expect(HostPattern(text) == nil)
    }
}

struct GatewayErrorTests {
    @Test func responseHasJSONBodyAndHeader() throws {
        let error = GatewayError(.connectFailed, "could not \"connect\"", upstream: "h:1", causeDescription: "refused\n")
        let response = error.response()
        #expect(response.status.code == 502)
        #expect(response.headers["X-Gateway-Error"] == ["connect_failed"])
        #expect(response.headers["Content-Type"] == ["application/json"])
        guard case .bytes(let buffer) = response.body.storage else { Issue.record("expected bytes"); return }
        let text = String(buffer: buffer)
        #expect(text == #"{"error":"connect_failed","message":"could not \"connect\"","upstream":"h:1","cause":"refused\n"}"# + "\n")
        #expect(response.headers["Content-Length"] == ["\(buffer.readableBytes)"])
    }

    @Test func everyCodeHasAStatusAndStableRawValue() {
        for code in GatewayError.Code.allCases {
            #expect(code.status.code >= 400)
            #expect(code.rawValue.allSatisfy { $0.isLowercase || $0 == "_" })
        }
        #expect(GatewayError.Code.pinMismatch.status.code == 502)
        #expect(GatewayError.Code.headTooLarge.status.code == 431)
        #expect(GatewayError.Code.requestTimeout.status.code == 504)
        #expect(GatewayError.Code.proxyAuthRequired.status.code == 407)
    }
}

struct SPKIPinTests {
    @Test func parsesOnlyWellFormedPins() {
        let good = "sha256/" + String(repeating: "A", count: 43) + "="
        #expect(SPKIPin(good)?.description == good)
        #expect(SPKIPin("sha256/short") == nil)
        #expect(SPKIPin("sha1/" + String(repeating: "A", count: 43) + "=") == nil)
        #expect(SPKIPin("sha256/" + String(repeating: "!", count: 44)) == nil)
    }
}
