import Foundation
import GatewayTesting
import Testing

/// Malformed and hostile requests: each refused with the right status, the
/// connection closed, nothing forwarded.
@Suite(.timeLimit(.minutes(2)))
struct BadInputTests {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var request: String
        var status: Int
        var code: String?
        var description: String { name }
    }

    static let host = "upstream.test:80"

    static let cases: [Case] = [
        Case(name: "content-length with transfer-encoding",
             request: "POST http://\(host)/echo HTTP/1.1\r\nHost: \(host)\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
             status: 400, code: "request_smuggling"),
        Case(name: "conflicting content-lengths",
             request: "POST http://\(host)/echo HTTP/1.1\r\nHost: \(host)\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde",
             status: 400, code: nil),
        Case(name: "obs-fold",
             request: "GET http://\(host)/echo HTTP/1.1\r\nHost: \(host)\r\nX-Folded: a\r\n  b\r\n\r\n",
             status: 400, code: nil),
        Case(name: "invalid method character",
             request: "GE(T http://\(host)/echo HTTP/1.1\r\nHost: \(host)\r\n\r\n",
             status: 400, code: nil),
        Case(name: "invalid header name character",
             request: "GET http://\(host)/echo HTTP/1.1\r\nHost: \(host)\r\nBad Header: x\r\n\r\n",
             status: 400, code: nil),
        Case(name: "origin-form to the proxy port",
             request: "GET /echo HTTP/1.1\r\nHost: \(host)\r\n\r\n",
             status: 400, code: "unsupported_target"),
        Case(name: "userinfo in the target",
             request: "GET http://user@\(host)/echo HTTP/1.1\r\nHost: \(host)\r\n\r\n",
             status: 400, code: "bad_request"),
        Case(name: "two host headers",
             request: "GET http://\(host)/echo HTTP/1.1\r\nHost: \(host)\r\nHost: other.test\r\n\r\n",
             status: 400, code: "bad_request"),
        Case(name: "http/1.1 without host",
             request: "GET http://\(host)/echo HTTP/1.1\r\nAccept: */*\r\n\r\n",
             status: 400, code: "bad_request"),
        Case(name: "a transfer coding before chunked",
             request: "POST http://\(host)/echo HTTP/1.1\r\nHost: \(host)\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
             status: 501, code: "unsupported_transfer_coding"),
        Case(name: "connect with a body",
             request: "CONNECT \(host) HTTP/1.1\r\nHost: \(host)\r\nContent-Length: 5\r\n\r\nhello",
             status: 400, code: "bad_request"),
        Case(name: "non-canonical ipv4 target",
             request: "GET http://2130706433/echo HTTP/1.1\r\nHost: 2130706433\r\n\r\n",
             status: 400, code: "bad_request"),
        Case(name: "request line over the limit",
             request: "GET http://\(host)/\(String(repeating: "a", count: 70_000)) HTTP/1.1\r\nHost: \(host)\r\n\r\n",
             status: 431, code: "head_too_large"),
        Case(name: "headers over the limit",
             request: "GET http://\(host)/echo HTTP/1.1\r\nHost: \(host)\r\n" + (0..<400).map { "X-H\($0): \(String(repeating: "v", count: 100))\r\n" }.joined() + "\r\n",
             status: 431, code: "head_too_large"),
    ]

    @Test(arguments: cases)
    func refusedAndNotForwarded(_ testCase: Case) async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            config.limits.maxHeadBytes = 16 * 1024
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }
        // The host in the cases resolves nowhere; what matters is that nothing is sent anywhere.
        let client = try await gateway.rawConnection()
        try await client.send(testCase.request.replacingOccurrences(of: Self.host, with: "127.0.0.1:\(upstream.port)"))
        let bytes = try await client.receive(timeout: .seconds(10))
        let response = try #require(RawResponse(bytes), "no HTTP response for \(testCase.name): \(String(decoding: bytes, as: UTF8.self))")
        #expect(response.status == testCase.status, "\(testCase.name)")
        if let code = testCase.code {
            #expect(response.header("X-Gateway-Error") == code)
            #expect(response.bodyText.contains("\"error\":\"\(code)\""))
        } else {
            #expect(response.header("X-Gateway-Error") != nil)
        }
        #expect(response.header("Content-Type") == "application/json")
        #expect(await client.waitForClose(timeout: .seconds(5)), "connection must be closed")
        #expect(upstream.requestsServed == 0, "nothing may be forwarded")
    }

    @Test func slowlorisGets408AndIsClosed() async throws {
        let gateway = try await GatewayHarness.start { config in
            config.limits.headerTimeout = .milliseconds(300)
        }
        defer { Task { try? await gateway.stop() } }
        let client = try await gateway.rawConnection()
        try await client.send("GET http://127.0.0.1:9/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\nX-Slow: ")
        let bytes = try await client.receive(timeout: .seconds(5))
        let response = try #require(RawResponse(bytes))
        #expect(response.status == 408)
        #expect(response.header("X-Gateway-Error") == "head_timeout")
        #expect(await client.waitForClose(timeout: .seconds(5)))
    }

    @Test func idleKeepAliveConnectionIsClosedQuietly() async throws {
        let gateway = try await GatewayHarness.start { config in
            config.limits.idleTimeout = .milliseconds(200)
        }
        defer { Task { try? await gateway.stop() } }
        let client = try await gateway.rawConnection()
        // Generous bound: other suites stream 1 GiB through the same event loops meanwhile.
        #expect(await client.waitForClose(timeout: .seconds(30)))
        #expect(try await client.receive(timeout: .milliseconds(100)).isEmpty)
    }
}
