import Foundation
import GatewayCore
import GatewayTesting
import GatewayUpstream
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Testing

/// Handshakes through `PinningTLSHandlerFactory` against an in-process NIO TLS
/// server and against `openssl s_server`, both presenting leaf + intermediate
/// (never the root) from a `TestCertificates` PKI.
@Suite("TLS: pinning handshakes", .timeLimit(.minutes(1)))
struct PinningTLSHandlerFactoryTests {
    struct Fixture {
        let pki: TestCertificates
        let caFile: String
        let events = RecordingEvents()
        let logs: RecordingLogHandler.Store
        let factory: PinningTLSHandlerFactory

        init(variant: TestCertificates.LeafVariant = .valid) throws {
            let pki = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"], variant: variant)
            self.pki = pki
            self.caFile = try pki.caFile()
            let (logger, logs) = RecordingLogHandler.logger()
            self.logs = logs
            self.factory = PinningTLSHandlerFactory(events: events, logger: logger)
        }

        func settings(pins: [SPKIPin] = [], mode: PinMode = .enforce, insecure: Bool = false) -> UpstreamTLSSettings {
            UpstreamTLSSettings(pins: pins, pinMode: mode, caFile: caFile, insecureSkipVerify: insecure)
        }

        func handshake(
            _ peer: TLSPeer, _ settings: UpstreamTLSSettings, serverHostname: String = "localhost"
        ) async throws -> HandshakeOutcome {
            try await TLSClient.handshake(
                port: peer.port, serverHostname: serverHostname, settings: settings, factory: factory)
        }
    }

    /// The test client itself: a connect that fails (nothing listens) throws,
    /// and its probe's promise is failed, not leaked (NIO traps on a dropped
    /// promise: under load a connect timeout crashed the whole test run).
    @Test func aRefusedConnectThrowsAndLeaksNoPromise() async throws {
        let f = try Fixture()
        let port = try await PoolTest.closedPort()
        await #expect(throws: (any Error).self) {
            try await TLSClient.handshake(port: port, settings: f.settings(), factory: f.factory)
        }
    }

    // MARK: Chain and hostname

    @Test("a valid chain to the configured CA succeeds, and data flows", arguments: PeerKind.available)
    func validChain(peer kind: PeerKind) async throws {
        let f = try Fixture()
        try await TLSPeer.with(kind, pki: f.pki) { peer in
            let outcome = try await f.handshake(peer, f.settings())
            #expect(outcome.succeeded, "\(String(describing: outcome.error)) \(String(describing: outcome.failure))")
            #expect(outcome.failure == nil)
            #expect(outcome.response?.hasPrefix("HTTP/1.") == true)
        }
    }

    @Test("an IP literal is verified against the IP SAN (and sends no SNI)", arguments: PeerKind.available)
    func ipLiteral(peer kind: PeerKind) async throws {
        let f = try Fixture()
        try await TLSPeer.with(kind, pki: f.pki) { peer in
            let outcome = try await f.handshake(peer, f.settings(), serverHostname: "127.0.0.1")
            #expect(outcome.succeeded, "\(String(describing: outcome.failure))")
        }
    }

    @Test("the system bundle does not trust the test CA", arguments: [PeerKind.nio])
    func systemRootsRejectTestCA(peer kind: PeerKind) async throws {
        let f = try Fixture()
        try await TLSPeer.with(kind, pki: f.pki) { peer in
            let outcome = try await f.handshake(peer, UpstreamTLSSettings())
            #expect(!outcome.succeeded)
            #expect(outcome.failure?.code == .certificateInvalid)
        }
    }

    @Test("an expired leaf fails with certificate_invalid", arguments: PeerKind.available)
    func expired(peer kind: PeerKind) async throws {
        let f = try Fixture(variant: .expired)
        try await TLSPeer.with(kind, pki: f.pki) { peer in
            let outcome = try await f.handshake(peer, f.settings())
            #expect(!outcome.succeeded)
            let failure = try #require(outcome.failure)
            #expect(failure.code == .certificateInvalid)
            #expect(failure.message.contains("expired"))
            #expect(failure.upstream == "localhost")
        }
    }

    @Test("a leaf for another name fails with certificate_invalid", arguments: PeerKind.available)
    func wrongHostname(peer kind: PeerKind) async throws {
        let f = try Fixture(variant: .wrongHostname)
        try await TLSPeer.with(kind, pki: f.pki) { peer in
            let outcome = try await f.handshake(peer, f.settings())
            #expect(!outcome.succeeded)
            let failure = try #require(outcome.failure)
            #expect(failure.code == .certificateInvalid)
            #expect(failure.message.contains("hostname mismatch"))
            #expect(failure.cause?.contains("wrong.invalid") == true)
        }
    }

    @Test("a chain to an unknown CA fails with certificate_invalid", arguments: PeerKind.available)
    func unknownCA(peer kind: PeerKind) async throws {
        let f = try Fixture()
        let stranger = try TestCertificates()  // same names, another root
        try await TLSPeer.with(kind, pki: stranger) { peer in
            let outcome = try await f.handshake(peer, f.settings())
            #expect(!outcome.succeeded)
            let failure = try #require(outcome.failure)
            #expect(failure.code == .certificateInvalid)
            #expect(failure.message.contains("unknown CA"))
        }
    }

    @Test("a self-signed leaf fails with certificate_invalid", arguments: PeerKind.available)
    func selfSigned(peer kind: PeerKind) async throws {
        let f = try Fixture(variant: .selfSigned)
        try await TLSPeer.with(kind, pki: f.pki) { peer in
            let outcome = try await f.handshake(peer, f.settings())
            #expect(outcome.failure?.code == .certificateInvalid)
        }
    }

    @Test("insecure_skip_verify accepts an unknown CA and warns once per host", arguments: PeerKind.available)
    func insecureSkipVerify(peer kind: PeerKind) async throws {
        let f = try Fixture(variant: .selfSigned)
        try await TLSPeer.with(kind, pki: f.pki) { peer in
            for _ in 0..<2 {
                let outcome = try await f.handshake(peer, f.settings(insecure: true))
                #expect(outcome.succeeded, "\(String(describing: outcome.failure))")
            }
        }
        let warnings = f.logs.messages(at: .warning)
        #expect(warnings == ["TLS verification disabled for localhost (insecure_skip_verify)"])
    }

    @Test("insecure_skip_verify still enforces pins on the presented chain", arguments: PeerKind.available)
    func insecureStillPins(peer kind: PeerKind) async throws {
        let f = try Fixture(variant: .selfSigned)
        let leafPin = try SPKIHasher.pin(for: f.pki.leaf.certificate)
        try await TLSPeer.with(kind, pki: f.pki) { peer in
            let good = try await f.handshake(peer, f.settings(pins: [leafPin], insecure: true))
            #expect(good.succeeded)
            let bad = try await f.handshake(peer, f.settings(pins: [unrelatedPin], insecure: true))
            #expect(!bad.succeeded)
            #expect(bad.failure?.code == .pinMismatch)
        }
    }

    // MARK: Pins

    enum PinTarget: String, CaseIterable, Sendable {
        case leaf, intermediate, unsentRoot
    }

    @Test("a pin on any certificate of the validated chain matches", arguments: PeerKind.available, PinTarget.allCases)
    func pinOnChain(peer kind: PeerKind, target: PinTarget) async throws {
        let f = try Fixture()
        let pins = try f.pki.pins
        let pin =
            switch target {
            case .leaf: pins.leaf
            case .intermediate: pins.intermediate
            case .unsentRoot: pins.root
            }
        try await TLSPeer.with(kind, pki: f.pki) { peer in
            let outcome = try await f.handshake(peer, f.settings(pins: [pin]))
            #expect(outcome.succeeded, "\(String(describing: outcome.failure))")
            #expect(outcome.failure == nil)
        }
        #expect(f.events.pinFailures.isEmpty)
    }

    @Test("a backup pin matches when the first one does not", arguments: PeerKind.available)
    func backupPin(peer kind: PeerKind) async throws {
        let f = try Fixture()
        let pins = try f.pki.pins
        try await TLSPeer.with(kind, pki: f.pki) { peer in
            let outcome = try await f.handshake(peer, f.settings(pins: [unrelatedPin, pins.intermediate]))
            #expect(outcome.succeeded)
        }
        #expect(f.events.pinFailures.isEmpty)
    }

    @Test("a wrong pin in enforce mode fails the handshake, logs and counts", arguments: PeerKind.available)
    func wrongPinEnforce(peer kind: PeerKind) async throws {
        let f = try Fixture()
        let pins = try f.pki.pins
        try await TLSPeer.with(kind, pki: f.pki) { peer in
            let outcome = try await f.handshake(peer, f.settings(pins: [unrelatedPin], mode: .enforce))
            #expect(!outcome.succeeded)
            #expect(outcome.response == nil)
            let failure = try #require(outcome.failure)
            #expect(failure.code == .pinMismatch)
            #expect(failure.upstream == "localhost")
            let cause = try #require(failure.cause)
            #expect(cause.hasPrefix("presented pins: sha256/"))
            for pin in [pins.leaf, pins.intermediate, pins.root] {
                #expect(cause.contains(pin.description))
            }
        }
        #expect(
            f.events.pinFailures == [.init(host: "localhost", upstream: "test-upstream", mode: .enforce)])
        let errors = f.logs.messages(at: .error)
        #expect(errors.count == 1)
        #expect(errors.first?.contains("localhost") == true)
        #expect(errors.first?.contains(pins.leaf.description) == true)
    }

    @Test("a wrong pin in report mode lets the handshake succeed and counts", arguments: PeerKind.available)
    func wrongPinReport(peer kind: PeerKind) async throws {
        let f = try Fixture()
        try await TLSPeer.with(kind, pki: f.pki) { peer in
            let outcome = try await f.handshake(peer, f.settings(pins: [unrelatedPin], mode: .report))
            #expect(outcome.succeeded)
            #expect(outcome.failure == nil)
            #expect(outcome.response?.hasPrefix("HTTP/1.") == true)
        }
        #expect(f.events.pinFailures == [.init(host: "localhost", upstream: "test-upstream", mode: .report)])
        #expect(f.logs.messages(at: .warning).contains { $0.contains("pin mismatch") && $0.contains("localhost") })
        #expect(f.logs.messages(at: .error).isEmpty)
    }

    @Test("pins do not rescue an invalid chain", arguments: [PeerKind.nio])
    func pinsDoNotRescueInvalidChain(peer kind: PeerKind) async throws {
        let f = try Fixture(variant: .expired)
        let pins = try f.pki.pins
        try await TLSPeer.with(kind, pki: f.pki) { peer in
            let outcome = try await f.handshake(peer, f.settings(pins: [pins.leaf], mode: .report))
            #expect(outcome.failure?.code == .certificateInvalid)
        }
    }

    @Test("an RSA server (openssl-made key) pins and verifies", .enabled(if: OpenSSLCLI.isAvailable))
    func rsaPeer() async throws {
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "rsa")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try OpenSSLCLI.shell(
            "openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 2 -subj /CN=localhost"
                + " -addext subjectAltName=DNS:localhost",
            in: dir)
        let expected = try #require(SPKIPin(try OpenSSLCLI.pin(ofCertificateAt: "cert.pem", in: dir)))
        let peer = try await OpenSSLServer.start(
            arguments: ["s_server", "-cert", dir + "/cert.pem", "-key", dir + "/key.pem", "-www"], cleanup: nil)
        defer { Task { await peer.stop() } }
        let (logger, _) = RecordingLogHandler.logger()
        let factory = PinningTLSHandlerFactory(logger: logger)

        // Self-signed: trusted as its own CA file; pinned by the openssl pipeline's pin.
        let trusted = UpstreamTLSSettings(pins: [expected], caFile: dir + "/cert.pem")
        let ok = try await TLSClient.handshake(port: peer.port, settings: trusted, factory: factory)
        #expect(ok.succeeded, "\(String(describing: ok.failure))")

        let wrong = UpstreamTLSSettings(pins: [unrelatedPin], caFile: dir + "/cert.pem")
        let refused = try await TLSClient.handshake(port: peer.port, settings: wrong, factory: factory)
        #expect(refused.failure?.code == .pinMismatch)
        #expect(refused.failure?.cause == "presented pins: \(expected)")
        await peer.stop()
    }

    @Test("TestUpstream with TLS works through the factory")
    func testUpstreamTLS() async throws {
        let f = try Fixture()
        let upstream = try await TestUpstream.start(tls: f.pki.makeServerContext())
        do {
            let outcome = try await TLSClient.handshake(
                port: upstream.port, settings: f.settings(pins: [try f.pki.pins.intermediate]), factory: f.factory)
            #expect(outcome.succeeded, "\(String(describing: outcome.failure))")
            #expect(outcome.response?.hasPrefix("HTTP/1.1") == true)
        } catch {
            try? await upstream.shutdown()
            throw error
        }
        try await upstream.shutdown()
    }

    // MARK: Configuration errors and verification without sockets

    @Test("a missing ca_file fails when the handler is made, with a clear error")
    func missingCAFile() throws {
        let (logger, _) = RecordingLogHandler.logger()
        let factory = PinningTLSHandlerFactory(logger: logger)
        let settings = UpstreamTLSSettings(caFile: "/nonexistent/ca.pem")
        #expect {
            _ = try factory.makeClientHandler(serverHostname: "localhost", settings: settings, upstreamName: nil)
        } throws: { error in
            (error as? GatewayError)?.code == .certificateInvalid
                && (error as? GatewayError)?.message.contains("/nonexistent/ca.pem") == true
        }
    }

    @Test("verify() returns the validated chain leaf to root, root from the trust store")
    func verifyWithoutSockets() async throws {
        let f = try Fixture()
        let presented = try f.pki.serverChain.map { try $0.nioCertificate() }
        let chain = try #require(
            try await f.factory.verify(presented: presented, serverHostname: "localhost", settings: f.settings()))
        #expect(chain.count == 3)
        #expect(try chain.map { try $0.toDERBytes() } == [f.pki.leaf, f.pki.intermediate, f.pki.root].map { try $0.derBytes })
    }
}

/// A chain that verified once is remembered; what it is remembered for must not leak.
@Suite("TLS: remembered chains", .timeLimit(.minutes(1)))
struct VerifiedChainMemoryTests {
    @Test("pins are checked again for a remembered chain")
    func pinsCheckedOnRememberedChain() async throws {
        let f = try PinningTLSHandlerFactoryTests.Fixture()
        let presented = try f.pki.serverChain.map { try $0.nioCertificate() }
        _ = try await f.factory.verify(presented: presented, serverHostname: "localhost", settings: f.settings())
        for _ in 0..<2 {
            await #expect {
                _ = try await f.factory.verify(
                    presented: presented, serverHostname: "localhost", settings: f.settings(pins: [unrelatedPin]))
            } throws: { ($0 as? GatewayError)?.code == .pinMismatch }
        }
        #expect(f.events.pinFailures.count == 2)
    }

    @Test("a chain remembered for one host is not accepted for another", arguments: PeerKind.available)
    func rememberedPerHost(peer kind: PeerKind) async throws {
        let f = try PinningTLSHandlerFactoryTests.Fixture()
        try await TLSPeer.with(kind, pki: f.pki) { peer in
            let first = try await f.handshake(peer, f.settings())
            #expect(first.succeeded)
            let again = try await f.handshake(peer, f.settings())
            #expect(again.succeeded)
            let otherName = try await f.handshake(peer, f.settings(), serverHostname: "other.localhost")
            #expect(otherName.failure?.code == .certificateInvalid)
        }
    }

    @Test("a chain remembered under one trust store is not accepted under another")
    func rememberedPerTrustStore() async throws {
        let f = try PinningTLSHandlerFactoryTests.Fixture()
        let presented = try f.pki.serverChain.map { try $0.nioCertificate() }
        _ = try await f.factory.verify(presented: presented, serverHostname: "localhost", settings: f.settings())
        var other = f.settings()
        other.caFile = try TestCertificates().caFile()
        await #expect {
            _ = try await f.factory.verify(presented: presented, serverHostname: "localhost", settings: other)
        } throws: { ($0 as? GatewayError)?.message.contains("unknown CA") == true }

        // The same file rewritten in place (a config reload) is parsed again.
        let path = try #require(f.settings().caFile)
        try await Task.sleep(for: .milliseconds(50))  // past the file system's timestamp granularity
        try TestCertificates().rootPEM.write(toFile: path, atomically: false, encoding: .utf8)
        await #expect {
            _ = try await f.factory.verify(presented: presented, serverHostname: "localhost", settings: f.settings())
        } throws: { ($0 as? GatewayError)?.code == .certificateInvalid }
    }
}
