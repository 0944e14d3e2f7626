import Foundation
import GatewayCore
import GatewayTesting
import GatewayUpstream
import NIOPosix
import Testing

@Suite("TLS: pins inspector", .timeLimit(.minutes(1)))
struct PinInspectorTests {
    @Test("lists leaf and intermediate with their pins, the trust-store root, and renders a snippet",
          arguments: PeerKind.available)
    func inspectsVerifiedChain(peer kind: PeerKind) async throws {
        let pki = try TestCertificates()
        let caFile = try pki.caFile()
        let pins = try pki.pins
        let inspection = try await TLSPeer.with(kind, pki: pki) { peer in
            try await PinInspector.inspect(
                host: "localhost", port: peer.port, caFile: caFile,
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
        }
        #expect(inspection.verified, "\(inspection.verificationError ?? "")")
        #expect(inspection.verificationError == nil)
        #expect(inspection.certificates.map(\.pin) == [pins.leaf, pins.intermediate, pins.root])
        #expect(inspection.certificates.map(\.isFromServer) == [true, true, false])
        #expect(inspection.certificates[0].subject.contains("CN=localhost"))
        #expect(inspection.certificates[0].issuer.contains("Gateway Test Intermediate CA"))
        #expect(inspection.certificates[1].subject.contains("Gateway Test Intermediate CA"))
        #expect(inspection.suggestedPins == [pins.intermediate, pins.root])

        let text = inspection.render(upstreamName: "local-api")
        #expect(text.contains("[0] leaf"))
        #expect(text.contains("[2] root from the trust store, not sent by the server"))
        for pin in [pins.leaf, pins.intermediate, pins.root] {
            #expect(text.contains("pin:     \(pin)"))
        }
        let snippet = """
            upstreams:
              - name: local-api
                hosts: [localhost]
                tls:
                  pins: [\(pins.intermediate), \(pins.root)]
                  pin_mode: enforce
            """
        #expect(text.contains(snippet), "\(text)")
        #expect(text.contains("(first pin: intermediate; second, as backup: root)"), "\(text)")
    }

    @Test("an untrusted chain is still listed, marked unverified", arguments: PeerKind.available)
    func inspectsUntrustedChain(peer kind: PeerKind) async throws {
        let pki = try TestCertificates()
        let pins = try pki.pins
        let otherCA = try TestCertificates().caFile()
        let inspection = try await TLSPeer.with(kind, pki: pki) { peer in
            try await PinInspector.inspect(
                host: "localhost", port: peer.port, caFile: otherCA,
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
        }
        #expect(!inspection.verified)
        #expect(inspection.verificationError?.contains("unknown CA") == true)
        #expect(inspection.certificates.map(\.pin) == [pins.leaf, pins.intermediate])
        #expect(inspection.certificates.allSatisfy { $0.isFromServer })
        // No root above the intermediate: the leaf is the backup.
        #expect(inspection.suggestedPins == [pins.intermediate, pins.leaf])
        let text = inspection.render(upstreamName: nil)
        #expect(text.contains("NOT verified"))
        #expect(text.contains("  - name: localhost\n    hosts: [localhost]\n"))
        #expect(text.contains("(first pin: intermediate; second, as backup: leaf)"), "\(text)")
    }

    @Test("a closed port fails with connect_failed")
    func closedPort() async throws {
        let port = try await FreePort.find()
        await #expect {
            _ = try await PinInspector.inspect(
                host: "127.0.0.1", port: port, timeout: .seconds(2),
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
        } throws: { error in
            (error as? GatewayError)?.code == .connectFailed
        }
    }
}
