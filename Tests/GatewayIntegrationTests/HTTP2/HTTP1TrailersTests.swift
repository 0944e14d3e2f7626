import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// An HTTP/2 upstream's trailers reach an HTTP/1.1 client in its response's
/// last chunk when it asked for them (`TE: trailers`), and only then.
@Suite(.timeLimit(.minutes(1)))
struct HTTP1TrailersTests {
    func exchange(_ gateway: GatewayHarness, te: Bool) async throws -> String {
        let client = try await gateway.rawConnection()
        defer { Task { await client.close() } }
        try await client.send(
            "GET http://h2.test/trailers HTTP/1.1\r\nHost: h2.test\r\n" + (te ? "TE: trailers\r\nConnection: TE\r\n" : "") + "\r\n"
        )
        // Up to the last chunk (after the data's CRLF), then its trailer section line by line to the empty one.
        var text = String(decoding: try await client.receiveUntil("\r\n0\r\n"), as: UTF8.self)
        while true {
            let line = String(decoding: try await client.receiveUntil("\r\n"), as: UTF8.self)
            text += line
            if line == "\r\n" { return text }
        }
    }

    @Test func trailersGoToAClientThatAskedForThem() async throws {
        let origin = try await HTTP2TestOrigin.start()  // h2c, prior knowledge
        let gateway = try await GatewayHarness.start { config in
            config.upstreams = [UpstreamConfig(
                name: "h2", hosts: [HostPattern("h2.test")!],
                origin: UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: origin.port), httpVersion: .http2
            )]
        }
        defer { Task { try? await gateway.stop(); try? await origin.shutdown() } }

        let asked = try await exchange(gateway, te: true)
        #expect(asked.hasPrefix("HTTP/1.1 200"), "\(asked)")
        #expect(asked.lowercased().contains("transfer-encoding: chunked"), "\(asked)")
        #expect(asked.hasSuffix("0\r\ngrpc-status: 0\r\nx-trailer: done\r\n\r\n"), "\(asked)")

        let notAsked = try await exchange(gateway, te: false)
        #expect(notAsked.hasPrefix("HTTP/1.1 200"), "\(notAsked)")
        #expect(notAsked.hasSuffix("\r\n0\r\n\r\n"), "no trailer section: \(notAsked)")
        #expect(!notAsked.contains("grpc-status"))
        #expect(origin.requests.allSatisfy { $0.protocolName == "h2" })
    }
}
