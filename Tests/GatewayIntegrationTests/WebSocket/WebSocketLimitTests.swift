import Foundation
import GatewayTesting
import Testing

/// Upstream WebSocket connections are bounded per host and port
/// (`pool.max_websockets_per_host`): each is a connection of its own for as
/// long as it lives, so one client could otherwise open a thousand to one
/// origin. A handshake past the bound is refused with 503 naming the setting;
/// a closed WebSocket gives its slot back.
@Suite(.timeLimit(.minutes(1)))
struct WebSocketLimitTests {
    static func handshake(_ origin: WebSocketTestOrigin) -> String {
        "GET http://127.0.0.1:\(origin.port)/feed HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    }

    @Test func handshakesPastTheBoundAre503AndAClosedOneGivesItsSlotBack() async throws {
        let origin = try await WebSocketTestOrigin.start()
        let gateway = try await GatewayHarness.start { config in
            config.pool.maxWebSocketsPerHost = 2
        }
        defer { Task { try? await gateway.stop(); try? await origin.shutdown() } }

        var open: [RawTCPClient] = []
        for _ in 0..<2 {
            let client = try await gateway.rawConnection()
            try await client.send(Self.handshake(origin))
            let head = String(decoding: try await client.receiveUntil("\r\n\r\n"), as: UTF8.self)
            #expect(head.hasPrefix("HTTP/1.1 101"), "\(head)")
            open.append(client)
        }
        let refused = try await gateway.rawConnection()
        try await refused.send(Self.handshake(origin))
        let answer = try #require(RawResponse(try await refused.receive(timeout: .seconds(10))))
        #expect(answer.status == 503)
        #expect(answer.header("X-Gateway-Error") == "pool_exhausted")
        #expect(answer.bodyText.contains("pool.max_websockets_per_host"), "\(answer.bodyText)")
        #expect(origin.handshakes.count == 2, "the third never reached the origin")

        await open[0].close()
        var served = false
        for _ in 0..<50 where !served {
            let again = try await gateway.rawConnection()
            try await again.send(Self.handshake(origin))
            let head = String(decoding: try await again.receiveUntil("\r\n\r\n"), as: UTF8.self)
            served = head.hasPrefix("HTTP/1.1 101")
            if !served { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(served, "a closed WebSocket gave its slot back")
    }
}
