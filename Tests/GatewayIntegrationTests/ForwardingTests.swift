import Foundation
import GatewayTesting
import Testing

/// Plain-http forwarding through the live gateway with curl as the client.
@Suite(.timeLimit(.minutes(2)))
struct ForwardingTests {
    @Test func forwardsAbsoluteFormRequestAndRewritesHopByHopHeaders() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let result = try await gateway.curl([
            "-H", "X-First: 1", "-H", "X-Dup: a", "-H", "X-Dup: b",
            "-H", "Connection: keep-alive, X-Hop", "-H", "X-Hop: secret-hop", "-H", "Keep-Alive: timeout=5",
            "-H", "Proxy-Authorization: Basic Zm9vOmJhcg==", "-H", "X-Last: z",
            upstream.url("/echo?q=1&x=%20y"),
        ])
        #expect(result.status == 0, "\(result.stderrString)")
        let echo = try result.json(EchoReply.self)
        #expect(echo.method == "GET")
        #expect(echo.target == "/echo?q=1&x=%20y")
        #expect(echo.values("X-Dup") == ["a", "b"])
        #expect(echo.values("Host") == ["127.0.0.1:\(upstream.port)"])
        #expect(echo.values("Via") == ["1.1 gateway"])
        for hop in ["Connection", "X-Hop", "Keep-Alive", "Proxy-Authorization", "Proxy-Connection"] {
            #expect(echo.values(hop).isEmpty, "\(hop) must not be forwarded")
        }
        // End-to-end headers keep their order.
        let names = echo.headerNames.filter { $0.hasPrefix("X-") }
        #expect(names == ["X-First", "X-Dup", "X-Dup", "X-Last"])
    }

    @Test func keepAliveReusesOneUpstreamConnection() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let urls = (0..<10).map { upstream.url("/status/200?n=\($0)") }
        let result = try await gateway.curl(["-w", "%{num_connects} "] + urls.flatMap { ["-o", "/dev/null", $0] })
        #expect(result.status == 0, "\(result.stderrString)")
        // curl connected to the gateway once, the gateway to the upstream once.
        #expect(result.stdoutString.split(separator: " ").map(String.init) == ["1"] + Array(repeating: "0", count: 9))
        #expect(upstream.requestsServed == 10)
        #expect(upstream.connectionsAccepted == 1)
    }

    @Test func postBodiesContentLengthAndChunked() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let body = Array("hello 'world' $HOME `x` \\ \n\u{0}end".utf8)
        let fixed = try await gateway.curl(["--data-binary", "@-", upstream.url("/echo")], stdin: body)
        let fixedEcho = try fixed.json(EchoReply.self)
        #expect(fixedEcho.method == "POST")
        #expect(Data(base64Encoded: fixedEcho.body_base64).map(Array.init) == body)
        #expect(fixedEcho.values("Content-Length") == ["\(body.count)"])

        let chunked = try await gateway.curl(["-H", "Transfer-Encoding: chunked", "--data-binary", "@-", upstream.url("/echo")], stdin: body)
        let chunkedEcho = try chunked.json(EchoReply.self)
        #expect(Data(base64Encoded: chunkedEcho.body_base64).map(Array.init) == body)
        #expect(chunkedEcho.values("Transfer-Encoding") == ["chunked"])
    }

    @Test func expectContinueIsAnsweredByTheGateway() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let body = [UInt8](repeating: 0x61, count: 200_000)
        let result = try await gateway.curl(["-v", "-H", "Expect: 100-continue", "--expect100-timeout", "20", "--data-binary", "@-", upstream.url("/upload")], stdin: body)
        #expect(result.status == 0)
        #expect(result.stderrString.contains("HTTP/1.1 100 Continue"))
        #expect(result.stdoutString.contains("\"bytes\":200000"))
    }

    @Test func headNoContentAndNotModifiedHaveNoBody() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        // Three requests on one keep-alive connection: a stray body byte would break the next one.
        let client = try await gateway.rawConnection()
        let host = "127.0.0.1:\(upstream.port)"
        for target in ["/bytes/1000", "/status/204", "/status/304", "/status/200"] {
            let method = target == "/bytes/1000" ? "HEAD" : "GET"
            try await client.send("\(method) http://\(host)\(target) HTTP/1.1\r\nHost: \(host)\r\n\r\n")
            let head = try await client.receiveUntil("\r\n\r\n")
            let response = try #require(RawResponse(head))
            switch target {
            case "/bytes/1000":
                #expect(response.status == 200)
                #expect(response.header("Content-Length") == "1000")
            case "/status/204": #expect(response.status == 204)
            case "/status/304": #expect(response.status == 304)
            default:
                #expect(response.status == 200)
                let length = Int(response.header("Content-Length") ?? "") ?? -1
                let body = try await client.receive(count: length)
                #expect(String(decoding: body, as: UTF8.self) == "status 200\n")
            }
            #expect(response.header("Transfer-Encoding") == nil || target == "/status/200")
        }
        await client.close()
        #expect(upstream.connectionsAccepted == 1)
    }

    @Test func pipelinedRequestsAnswerInOrder() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let host = "127.0.0.1:\(upstream.port)"
        let client = try await gateway.rawConnection()
        try await client.send(
            "GET http://\(host)/status/201 HTTP/1.1\r\nHost: \(host)\r\n\r\n"
                + "GET http://\(host)/status/202 HTTP/1.1\r\nHost: \(host)\r\n\r\n"
                + "GET http://\(host)/status/203 HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n"
        )
        let all = String(decoding: try await client.receive(timeout: .seconds(10)), as: UTF8.self)
        let statuses = all.components(separatedBy: "HTTP/1.1 ").dropFirst().map { String($0.prefix(3)) }
        #expect(statuses == ["201", "202", "203"])
    }

    @Test func chunkedUpstreamResponseIsRelayedChunked() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let result = try await gateway.curl(["-D", "-", "-o", "/dev/null", upstream.url("/bytes/300000?chunked=1&chunk=1000")])
        #expect(result.stdoutString.lowercased().contains("transfer-encoding: chunked"))
        let body = try await gateway.curl([upstream.url("/bytes/300000?chunked=1&chunk=1000")])
        #expect(body.stdout == TestUpstream.pattern(count: 300_000))
    }

    /// A response streams: its head, then each part the upstream sends, reach
    /// the client before the upstream sends the next (the gateway flushes at
    /// the end of every upstream read, not only at the response's end).
    @Test func eachResponsePartReachesTheClientBeforeTheNext() async throws {
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let upstream = try await RawTCPServer.start { connection in
            _ = try await connection.receiveUntil("\r\n\r\n")
            var turns = released.makeAsyncIterator()
            try await connection.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            _ = await turns.next()
            try await connection.send("8\r\npart-one\r\n")
            _ = await turns.next()
            try await connection.send("8\r\npart-two\r\n0\r\n\r\n")
            _ = await connection.waitForClose(timeout: .seconds(5))
        }
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let client = try await RawTCPConnection.connect(port: gateway.proxyPort)
        defer { Task { await client.close() } }
        try await client.send("GET http://127.0.0.1:\(upstream.port)/stream HTTP/1.1\r\nHost: 127.0.0.1:\(upstream.port)\r\n\r\n")
        // The upstream waits for the test after each step: each must arrive on its own.
        let head = String(decoding: try await client.receiveUntil("\r\n\r\n", timeout: .seconds(5)), as: UTF8.self)
        #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"))
        release.yield()
        let first = String(decoding: try await client.receiveUntil("part-one", timeout: .seconds(5)), as: UTF8.self)
        #expect(!first.contains("part-two"))
        release.yield()
        release.finish()
        let rest = String(decoding: try await client.receiveUntil("0\r\n\r\n", timeout: .seconds(5)), as: UTF8.self)
        #expect(rest.contains("part-two"))
    }

    /// An upstream that breaks its framing mid-response: the parts that came
    /// before the break, in the same read, still reach the client before the
    /// connection closes.
    @Test func partsBeforeABrokenChunkReachTheClientBeforeTheClose() async throws {
        let upstream = try await RawTCPServer.start { connection in
            _ = try await connection.receiveUntil("\r\n\r\n")
            try await connection.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n8\r\npart-one\r\nZZZ\r\n")
            _ = await connection.waitForClose(timeout: .seconds(5))
        }
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let client = try await RawTCPConnection.connect(port: gateway.proxyPort)
        defer { Task { await client.close() } }
        try await client.send("GET http://127.0.0.1:\(upstream.port)/broken HTTP/1.1\r\nHost: 127.0.0.1:\(upstream.port)\r\n\r\n")
        let received = String(decoding: try await client.receive(timeout: .seconds(5)), as: UTF8.self)
        #expect(received.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(received)")
        #expect(received.contains("part-one"), "\(received)")
        #expect(!received.hasSuffix("0\r\n\r\n"), "a cut response must not look complete: \(received)")
        #expect(await client.waitForClose(timeout: .seconds(5)))
    }

    /// An origin answering in a transfer coding other than chunked alone: the
    /// client gets 502 `upstream_protocol_error` naming the coding, not the
    /// coded bytes as an identity body (`Transfer-Encoding` is hop-by-hop).
    @Test(arguments: ["gzip", "gzip, chunked"])
    func aResponseInAnotherTransferCodingIsRefused(_ coding: String) async throws {
        let upstream = try await RawTCPServer.start { connection in
            _ = try await connection.receiveUntil("\r\n\r\n")
            let body = coding == "gzip" ? "coded-bytes" : "b\r\ncoded-bytes\r\n0\r\n\r\n"
            try await connection.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: \(coding)\r\nConnection: close\r\n\r\n\(body)")
            _ = await connection.waitForClose(timeout: .seconds(5))
        }
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let result = try await gateway.curl(["-D", "-", "http://127.0.0.1:\(upstream.port)/coded"])
        let output = result.stdoutString
        #expect(output.hasPrefix("HTTP/1.1 502"), "\(output)")
        #expect(output.lowercased().contains("x-gateway-error: upstream_protocol_error"), "\(output)")
        #expect(output.contains("unsupported transfer coding"), "\(output)")
        #expect(!output.contains("coded-bytes"), "\(output)")
    }
}
