import Foundation
import GatewayTesting
import NIOConcurrencyHelpers
import Testing

/// An origin's 101 must answer the handshake (RFC 6455 §4.1): without
/// `Sec-WebSocket-Accept` (or with a wrong one, or without `Upgrade:
/// websocket`) the client gets 502 `upstream_protocol_error`, and what the
/// client sends afterwards never reaches the origin as a raw tunnel.
@Suite(.timeLimit(.minutes(1)))
struct WebSocketUpgradeValidationTests {
    static let handshake = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"

    @Test(arguments: [
        "Upgrade: websocket\r\nConnection: Upgrade\r\n",
        "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n",
        "Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n",
    ])
    func aSwitchingProtocolsThatDoesNotAnswerTheHandshakeIs502(fields: String) async throws {
        let received = NIOLockedValueBox<[String]>([])
        let origin = try await RawTCPServer.start { connection in
            let head = try await connection.receiveUntil("\r\n\r\n")
            received.withLockedValue { $0.append(String(decoding: head, as: UTF8.self)) }
            try await connection.send("HTTP/1.1 101 Switching Protocols\r\n\(fields)\r\n")
            // Whatever comes after would be the client's bytes, raw.
            if let more = try? await connection.receive(timeout: .seconds(2)), !more.isEmpty {
                received.withLockedValue { $0.append(String(decoding: more, as: UTF8.self)) }
            }
        }
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await origin.shutdown() } }

        let client = try await gateway.rawConnection()
        try await client.send("GET http://127.0.0.1:\(origin.port)/chat HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\(Self.handshake)\r\n")
        let response = try #require(RawResponse(try await client.receive(timeout: .seconds(10))))
        #expect(response.status == 502)
        #expect(response.header("X-Gateway-Error") == "upstream_protocol_error")
        try? await client.send("GET /admin HTTP/1.1\r\nHost: internal\r\n\r\n")
        #expect(await client.waitForClose(timeout: .seconds(5)))
        try await Task.sleep(for: .milliseconds(300))
        let seen = received.withLockedValue { $0 }
        #expect(seen.count == 1, "only the handshake reached the origin: \(seen)")
        #expect(!seen.joined().contains("/admin"))
    }
}
