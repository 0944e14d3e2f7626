import Foundation
import GatewayTesting
import Testing

/// `Expect: 100-continue` from an HTTP/1.0 client gets no
/// `100 Continue` (RFC 9110 §10.1.1); an HTTP/1.1 client still gets one.
@Suite(.timeLimit(.minutes(2)))
struct ExpectContinueHTTP10Tests {
    func interim(version: String, gateway: GatewayHarness, port: Int) async throws -> (early: String, all: String) {
        let client = try await gateway.rawConnection()
        try await client.send("POST http://127.0.0.1:\(port)/echo HTTP/\(version)\r\nHost: 127.0.0.1:\(port)\r\nExpect: 100-continue\r\nContent-Length: 5\r\nConnection: close\r\n\r\n")
        let early = String(decoding: try await client.receive(timeout: .milliseconds(700)), as: UTF8.self)
        try await client.send("hello")
        let rest = String(decoding: try await client.receive(timeout: .seconds(10)), as: UTF8.self)
        return (early, early + rest)
    }

    @Test func http10GetsNo100Continue() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }
        let old = try await interim(version: "1.0", gateway: gateway, port: upstream.port)
        #expect(!old.all.contains("100 Continue"), "\(old.all)")
        #expect(old.all.contains(" 200 "), "\(old.all)")
        let current = try await interim(version: "1.1", gateway: gateway, port: upstream.port)
        #expect(current.early.contains("100 Continue"), "control: \(current.all)")
        #expect(current.all.contains(" 200 "))
    }
}
