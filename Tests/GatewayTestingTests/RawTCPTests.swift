import GatewayTesting
import Testing

@Suite("TestSupport: RawTCPServer and RawTCPClient")
struct TestSupportRawTCPTests {
    @Test(.timeLimit(.minutes(1)))
    func scriptedServerAndClient() async throws {
        let server = try await RawTCPServer.start { connection in
            let request = try await connection.receiveUntil("\r\n\r\n", timeout: .seconds(5))
            try await connection.send("GARBAGE \(request.count)\n")
            try await connection.send([0, 1, 2])
        }
        let client = try await RawTCPClient.connect(port: server.port)
        try await client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        let reply = try await client.receive(timeout: .seconds(5))
        #expect(reply == Array("GARBAGE 27\n".utf8) + [0, 1, 2])
        #expect(client.isClosed)
        #expect(server.connectionsAccepted == 1)
        try await server.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func timeoutsAreBounded() async throws {
        let server = try await RawTCPServer.start { connection in
            // Never answer; just wait for the client to go away.
            _ = await connection.waitForClose(timeout: .seconds(30))
        }
        let client = try await RawTCPClient.connect(port: server.port)
        try await client.send("GET / HTTP/1.1\r\n")
        let clock = ContinuousClock()
        let start = clock.now
        await #expect(throws: RawTCPError.timedOut(received: [])) {
            _ = try await client.receiveUntil("\r\n", timeout: .milliseconds(200))
        }
        #expect(try await client.receive(timeout: .milliseconds(200)) == [])
        #expect(!client.isClosed)
        #expect(clock.now - start < .seconds(5))
        await client.close()
        // Shutdown cancels handlers still running.
        try await server.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func partialReadsKeepTheRest() async throws {
        let serverGot = TestSupportBytesBox()
        let server = try await RawTCPServer.start { connection in
            try await connection.send("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbodyEXTRA")
            try await connection.shutdownOutput()
            // The client can still talk after our FIN.
            await serverGot.set(try await connection.receive(count: 3, timeout: .seconds(5)))
        }
        let client = try await RawTCPClient.connect(port: server.port)
        let head = try await client.receiveUntil("\r\n\r\n")
        #expect(String(decoding: head, as: UTF8.self).hasSuffix("Content-Length: 4\r\n\r\n"))
        #expect(try await client.receive(count: 4) == Array("body".utf8))
        #expect(await client.waitForClose(timeout: .seconds(5)))
        #expect(try await client.read() == Array("EXTRA".utf8))
        #expect(try await client.read() == nil)
        await #expect(throws: RawTCPError.closedBeforeMarker(received: [])) {
            _ = try await client.receiveUntil("x")
        }
        try await client.send("abc")
        #expect(await client.waitForClose(timeout: .seconds(5)))
        for _ in 0..<100 where await serverGot.value.isEmpty {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(await serverGot.value == Array("abc".utf8))
        await client.close()
        try await server.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func resetIsSeenAsClose() async throws {
        let server = try await RawTCPServer.start { connection in
            try await connection.send("partial")
            try await Task.sleep(for: .milliseconds(100))
            await connection.reset()
        }
        let client = try await RawTCPClient.connect(port: server.port)
        #expect(await client.waitForClose(timeout: .seconds(5)))
        try await server.shutdown()
    }
}

actor TestSupportBytesBox {
    private(set) var value: [UInt8] = []
    func set(_ value: [UInt8]) { self.value = value }
}
