import Foundation
import GatewayCore
import GatewayTesting
import GatewayUpstream
import NIOCore
import NIOPosix
import Testing

/// Measures what a new upstream TLS connection costs. Opt-in (it prints
/// timings, asserts nothing about them): `GATEWAY_TLS_BENCH=1 swift test --filter TLSHandshakeCost`.
@Suite("TLS: handshake cost", .enabled(if: ProcessInfo.processInfo.environment["GATEWAY_TLS_BENCH"] != nil))
struct TLSHandshakeCostTests {
    @Test(.timeLimit(.minutes(2)))
    func handshakeCost() async throws {
        let pki = try TestCertificates()
        let caFile = try pki.caFile()
        let pins = try pki.pins
        let (logger, _) = RecordingLogHandler.logger()
        let factory = PinningTLSHandlerFactory(logger: logger)
        let peer = try await TLSPeer.start(.nio, pki: pki)
        let rounds = 200

        func measure(_ label: String, _ body: () async throws -> Void) async throws {
            for _ in 0..<10 { try await body() }  // warm up (bundle parsed, context built)
            let start = ContinuousClock.now
            for _ in 0..<rounds { try await body() }
            let perRound = (ContinuousClock.now - start) / rounds
            print("[tls-bench] \(label): \(perRound) per connection")
        }

        try await measure("TCP connect + close, no TLS") {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: peer.port).get()
            try await channel.close()
        }
        try await measure("TLS, no verification (insecure, no pins) + GET") {
            let outcome = try await TLSClient.handshake(
                port: peer.port, settings: UpstreamTLSSettings(insecureSkipVerify: true), factory: factory)
            #expect(outcome.succeeded)
        }
        try await measure("TLS, chain + hostname (ca_file) + GET") {
            let outcome = try await TLSClient.handshake(
                port: peer.port, settings: UpstreamTLSSettings(caFile: caFile), factory: factory)
            #expect(outcome.succeeded)
        }
        try await measure("TLS, chain + hostname + pins + GET") {
            let outcome = try await TLSClient.handshake(
                port: peer.port,
                settings: UpstreamTLSSettings(pins: [unrelatedPin, pins.intermediate], caFile: caFile),
                factory: factory)
            #expect(outcome.succeeded)
        }
        let presented = try pki.serverChain.map { try $0.nioCertificate() }
        let settings = UpstreamTLSSettings(pins: [pins.root], caFile: caFile)
        try await measure("verification callback work alone (no socket)") {
            _ = try await factory.verify(presented: presented, serverHostname: "localhost", settings: settings)
        }
        if FileManager.default.fileExists(atPath: "/etc/ssl/certs/ca-certificates.crt") {
            let clock = ContinuousClock()
            let cache = TrustRootCache()
            let elapsed = try clock.measure { _ = try cache.store(caFile: "/etc/ssl/certs/ca-certificates.crt") }
            let again = try clock.measure { _ = try cache.store(caFile: "/etc/ssl/certs/ca-certificates.crt") }
            print("[tls-bench] system bundle: first parse \(elapsed), cached lookup \(again)")
        }
        await peer.stop()
    }
}
