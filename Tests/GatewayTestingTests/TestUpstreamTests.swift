import Foundation
import GatewayTesting
import Testing

@Suite("TestSupport: TestUpstream")
struct TestSupportUpstreamTests {
    @Test(.timeLimit(.minutes(1)))
    func echoPreservesHeaderOrderDuplicatesAndBody() async throws {
        let upstream = try await TestUpstream.start()
        let client = try await RawTCPClient.connect(port: upstream.port)
        try await client.send(
            "POST /echo/path?q=a%20b HTTP/1.1\r\nHost: example.test\r\nX-B: 1\r\nx-a: two\r\nX-B: 3\r\n"
                + "Content-Length: 5\r\nConnection: close\r\n\r\nhello"
        )
        let response = TestSupportRawResponse(try await client.receive(timeout: .seconds(10)))
        #expect(response.statusLine == "HTTP/1.1 200 OK")
        #expect(response.headerValues("content-type") == ["application/json"])
        let echo = try EchoResponseBody.decode(response.body)
        #expect(echo.method == "POST")
        #expect(echo.target == "/echo/path?q=a%20b")
        let expected = [
            ["Host", "example.test"], ["X-B", "1"], ["x-a", "two"], ["X-B", "3"],
            ["Content-Length", "5"], ["Connection", "close"],
        ]
        #expect(echo.headers == expected)
        #expect(echo.body == Array("hello".utf8))
        #expect(echo.bodyLength == 5)
        #expect(upstream.receivedRequests == [
            RecordedRequest(method: "POST", target: "/echo/path?q=a%20b", headers: expected, body: Array("hello".utf8))
        ])
        await client.close()
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func echoAcceptsChunkedBodyFromCurl() async throws {
        let upstream = try await TestUpstream.start()
        let body = TestUpstream.pattern(count: 300_000)
        let result = try await testSupportCurl(
            ["-H", "Transfer-Encoding: chunked", "--data-binary", "@-", upstream.url("/echo")],
            stdin: body
        )
        #expect(result.status == 0, "\(result.stderrString)")
        let echo = try EchoResponseBody.decode(result.stdout)
        #expect(echo.bodyLength == body.count)
        #expect(echo.body == body)
        #expect(echo.headers.contains(["Transfer-Encoding", "chunked"]))
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func statusRouteWithExtraHeaders() async throws {
        let upstream = try await TestUpstream.start()
        let result = try await testSupportCurl([
            "-D", "-", upstream.url("/status/418?header=X-Test:yes&header=Retry-After:%203"),
        ])
        #expect(result.status == 0, "\(result.stderrString)")
        let response = TestSupportRawResponse(result.stdout)
        #expect(response.statusLine.hasPrefix("HTTP/1.1 418"))
        #expect(response.headerValues("x-test") == ["yes"])
        #expect(response.headerValues("retry-after") == ["3"])
        #expect(response.body == Array("status 418\n".utf8))

        // 204 has no body and the connection stays usable.
        let client = try await RawTCPClient.connect(port: upstream.port)
        try await client.send("GET /status/204 HTTP/1.1\r\nHost: x\r\n\r\n")
        let noContent = TestSupportRawResponse(try await client.receiveUntil("\r\n\r\n"))
        #expect(noContent.statusLine == "HTTP/1.1 204 No Content")
        #expect(noContent.headerValues("content-length").isEmpty)
        try await client.send("HEAD /status/500 HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = TestSupportRawResponse(try await client.receiveUntil("\r\n\r\n"))
        #expect(head.statusLine == "HTTP/1.1 500 Internal Server Error")
        #expect(head.headerValues("content-length") == ["11"])
        try await client.send("GET /status/103?header=X-Hint:1 HTTP/1.1\r\nHost: x\r\n\r\n")
        let early = try await client.receiveUntil("\r\n\r\n")
        let earlyText = String(decoding: early, as: UTF8.self)
        #expect(earlyText.hasPrefix("HTTP/1.1 103") && earlyText.hasSuffix("\r\nX-Hint: 1\r\n\r\n"))
        let final = TestSupportRawResponse(try await client.receiveUntil("status 103\n"))
        #expect(final.statusLine == "HTTP/1.1 200 OK")
        try await client.send("GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let rest = TestSupportRawResponse(try await client.receive(timeout: .seconds(10)))
        #expect(rest.statusLine == "HTTP/1.1 404 Not Found")
        #expect(upstream.connectionsAccepted == 2)
        #expect(upstream.requestsServed == 5)
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func bytesRouteWithContentLengthAndChunked() async throws {
        let upstream = try await TestUpstream.start()
        let count = 1024 * 1024
        let expected = TestUpstream.pattern(count: count)

        let plain = try await testSupportCurl([upstream.url("/bytes/\(count)?chunk=10000")])
        #expect(plain.status == 0, "\(plain.stderrString)")
        #expect(plain.stdout == expected)

        let chunked = try await testSupportCurl([upstream.url("/bytes/\(count)?chunked=1&chunk=7000")])
        #expect(chunked.status == 0, "\(chunked.stderrString)")
        #expect(chunked.stdout == expected)

        let client = try await RawTCPClient.connect(port: upstream.port)
        try await client.send("GET /bytes/10?chunked=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let raw = TestSupportRawResponse(try await client.receive(timeout: .seconds(10)))
        #expect(raw.headerValues("transfer-encoding") == ["chunked"])
        #expect(raw.headerValues("content-length").isEmpty)
        #expect(raw.body == Array("a\r\n".utf8) + TestUpstream.pattern(count: 10) + Array("\r\n0\r\n\r\n".utf8))

        let head = try await testSupportCurl(["-I", upstream.url("/bytes/1073741824")])
        #expect(TestSupportRawResponse(head.stdout).headerValues("content-length") == ["1073741824"])
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func bytesRouteStreamsOneGiBWithoutGrowingMemory() async throws {
        let upstream = try await TestUpstream.start()
        let count = 1024 * 1024 * 1024
        let baseline = testSupportResidentBytes() ?? 0
        let sampler = Task {
            var peak = 0
            while !Task.isCancelled {
                peak = max(peak, testSupportResidentBytes() ?? 0)
                try? await Task.sleep(for: .milliseconds(50))
            }
            return peak
        }
        let result = try await testSupportCurl(
            ["-o", "/dev/null", "-w", "%{size_download}", upstream.url("/bytes/\(count)")],
            timeout: .seconds(55)
        )
        sampler.cancel()
        let peak = await sampler.value
        #expect(result.status == 0, "\(result.stderrString)")
        #expect(result.stdoutString == "\(count)")
        // Streaming keeps the growth far below the body size (other tests share this process).
        #expect(peak - baseline < 256 * 1024 * 1024, "RSS grew by \(peak - baseline) bytes")
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func expectContinueAbsoluteFormAndPipelining() async throws {
        let upstream = try await TestUpstream.start()
        let client = try await RawTCPClient.connect(port: upstream.port)
        try await client.send("PUT /upload HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
        let interim = try await client.receiveUntil("\r\n\r\n")
        #expect(String(decoding: interim, as: UTF8.self) == "HTTP/1.1 100 Continue\r\n\r\n")
        try await client.send([1, 2, 3])
        let uploadHead = TestSupportRawResponse(try await client.receiveUntil("\r\n\r\n"))
        #expect(uploadHead.statusLine == "HTTP/1.1 200 OK")
        let length = try #require(uploadHead.headerValues("content-length").first.flatMap { Int($0) })
        let upload = try UploadResponseBody.decode(try await client.receive(count: length))
        #expect(upload == UploadResponseBody(bytes: 3, checksum: 6))

        // Two pipelined requests in one write, the first in absolute form.
        try await client.send(
            "GET http://origin.test/echo?x=1 HTTP/1.1\r\nHost: origin.test\r\n\r\n"
                + "GET /status/202 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        let both = String(decoding: try await client.receive(timeout: .seconds(10)), as: UTF8.self)
        #expect(both.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(both.contains("\"target\":\"http://origin.test/echo?x=1\""))
        #expect(both.contains("HTTP/1.1 202 Accepted\r\n"))
        #expect(both.hasSuffix("status 202\n"))
        #expect(upstream.connectionsAccepted == 1)
        #expect(upstream.requestsServed == 3)
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func keepAliveReusesOneConnection() async throws {
        let upstream = try await TestUpstream.start()
        let result = try await testSupportCurl([
            "-o", "/dev/null", "-o", "/dev/null", upstream.url("/echo"), upstream.url("/status/200"),
        ])
        #expect(result.status == 0, "\(result.stderrString)")
        #expect(upstream.connectionsAccepted == 1)
        #expect(upstream.requestsServed == 2)
        #expect(upstream.receivedRequests.map(\.target) == ["/echo", "/status/200"])
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func resetAfterMakesCurlFail() async throws {
        let upstream = try await TestUpstream.start()
        let result = try await testSupportCurl(["-o", "/dev/null", upstream.url("/reset-after/100000")])
        #expect([18, 56].contains(result.status), "curl exit \(result.status): \(result.stderrString)")

        let closed = try await testSupportCurl(["-o", "/dev/null", upstream.url("/close-after-head")])
        #expect(closed.status == 18, "curl exit \(closed.status): \(closed.stderrString)")
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func uploadChecksumsStreamedBody() async throws {
        let upstream = try await TestUpstream.start()
        let body = testSupportRandomBytes(count: 10 * 1024 * 1024)
        // Over 1 MiB, curl sends `Expect: 100-continue` and waits for the 100.
        let result = try await testSupportCurl(
            ["--data-binary", "@-", "-H", "Content-Type: application/octet-stream", upstream.url("/upload")],
            stdin: body
        )
        #expect(result.status == 0, "\(result.stderrString)")
        let upload = try UploadResponseBody.decode(result.stdout)
        #expect(upload == UploadResponseBody(bytes: body.count, checksum: TestUpstream.checksum(body)))
        #expect(upstream.receivedRequests.first?.header("expect") == "100-continue")
        #expect(upstream.receivedRequests.first?.body == [])

        let chunked = try await testSupportCurl(["-T", "-", upstream.url("/upload")], stdin: Array(body.prefix(100_001)))
        #expect(try UploadResponseBody.decode(chunked.stdout) == UploadResponseBody(
            bytes: 100_001,
            checksum: TestUpstream.checksum(body.prefix(100_001))
        ))
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func delayAndCustomResponder() async throws {
        let upstream = try await TestUpstream.start()
        let clock = ContinuousClock()
        let start = clock.now
        let delayed = try await testSupportCurl([upstream.url("/delay/300")])
        #expect(clock.now - start >= .milliseconds(300))
        #expect(delayed.stdoutString == "ok")

        let missing = try await testSupportCurl(["-o", "/dev/null", "-w", "%{http_code}", upstream.url("/custom/x")])
        #expect(missing.stdoutString == "404")

        upstream.setResponder { request in
            TestResponse(status: 201, headers: [("X-Seen", request.method)], body: request.body + Array("!".utf8))
        }
        let custom = try await testSupportCurl(["-D", "-", "--data-binary", "hi", upstream.url("/custom/x")])
        let response = TestSupportRawResponse(custom.stdout)
        #expect(response.statusLine.hasPrefix("HTTP/1.1 201"))
        #expect(response.headerValues("x-seen") == ["POST"])
        #expect(response.body == Array("hi!".utf8))
        #expect(upstream.receivedRequests.last?.body == Array("hi".utf8))
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func shutdownClosesIdleKeepAliveConnections() async throws {
        let upstream = try await TestUpstream.start()
        let client = try await RawTCPClient.connect(port: upstream.port)
        try await client.send("GET /status/200 HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try await client.receiveUntil("status 200\n")
        try await upstream.shutdown()
        #expect(await client.waitForClose(timeout: .seconds(5)))
    }

    @Test
    func patternAndChecksumHelpers() {
        let pattern = TestUpstream.pattern(count: 600)
        #expect(pattern[0] == 0 && pattern[250] == 250 && pattern[251] == 0 && pattern[599] == UInt8(599 % 251))
        #expect(TestUpstream.pattern(offset: 300, count: 10) == Array(pattern[300..<310]))
        let bytes = testSupportRandomBytes(count: 100_003, seed: UInt64.random(in: 1 ... .max))
        var naive: UInt32 = 0
        for byte in bytes { naive &+= UInt32(byte) }
        #expect(TestUpstream.checksum(bytes) == naive)  // [UInt8]: the eight-bytes-at-a-time path
        #expect(TestUpstream.checksum(bytes.lazy.map { $0 }) == naive)  // any sequence
        #expect(TestUpstream.checksum(bytes[1...]) == naive &- UInt32(bytes[0]))
        let allMax = [UInt8](repeating: 255, count: 20_000_000)
        #expect(TestUpstream.checksum(allMax) == UInt32(truncatingIfNeeded: 255 * 20_000_000))
    }
}
