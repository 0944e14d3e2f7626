import Foundation
import GatewayCore
import GatewayTesting
import GatewayUpstream
import NIOSSL
import Testing
import X509

@Suite("TLS: SPKI pins")
struct SPKIHasherTests {
    @Test(
        "pins equal the openssl pipeline",
        .enabled(if: OpenSSLCLI.isAvailable, "needs the openssl CLI"),
        .timeLimit(.minutes(1)),
        arguments: [
            "-newkey rsa:2048",
            "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1",
            "-newkey ec -pkeyopt ec_paramgen_curve:secp384r1",
        ]
    )
    func matchesOpenSSL(keyOptions: String) throws {
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "spki")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try OpenSSLCLI.shell(
            "openssl req -x509 \(keyOptions) -nodes -keyout key.pem -out cert.pem -days 2 -subj /CN=pin.test",
            in: dir)
        let expected = try OpenSSLCLI.pin(ofCertificateAt: "cert.pem", in: dir)
        let pem = try String(contentsOfFile: dir + "/cert.pem", encoding: .utf8)

        let certificate = try Certificate(pemEncoded: pem)
        #expect(try SPKIHasher.pin(for: certificate).description == expected)

        let nio = try #require(try NIOSSLCertificate.fromPEMFile(dir + "/cert.pem").first)
        #expect(try SPKIHasher.pin(for: nio).description == expected)
        #expect(try SPKIHasher.pin(forDER: nio.toDERBytes()).description == expected)
        #expect(SPKIHasher.pin(subjectPublicKeyInfoDER: try nio.extractPublicKey().toSPKIBytes()).description == expected)

        // The wrong way (inner key bits only) must not agree: guards against a regression to it.
        let inner = SPKIHasher.pin(subjectPublicKeyInfoDER: certificate.publicKey.subjectPublicKeyInfoBytes)
        #expect(inner.description != expected)
    }

    @Test(
        "pins of the generated test PKI equal the openssl pipeline",
        .enabled(if: OpenSSLCLI.isAvailable, "needs the openssl CLI"),
        .timeLimit(.minutes(1))
    )
    func testCertificatesMatchOpenSSL() throws {
        let pki = try TestCertificates()
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "spki")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let paths = try pki.write(to: dir)
        let pins = try pki.pins
        #expect(pins.leaf.description == (try OpenSSLCLI.pin(ofCertificateAt: paths.leaf, in: dir)))
        #expect(pins.intermediate.description == (try OpenSSLCLI.pin(ofCertificateAt: paths.intermediate, in: dir)))
        #expect(pins.root.description == (try OpenSSLCLI.pin(ofCertificateAt: paths.root, in: dir)))
        #expect(Set([pins.leaf, pins.intermediate, pins.root]).count == 3)
    }

    @Test("test certificates chain, expire and name as asked", .timeLimit(.minutes(1)))
    func testCertificateVariants() throws {
        let pki = try TestCertificates(dnsNames: ["localhost", "api.test"], ipAddresses: ["127.0.0.1", "::1"])
        #expect(pki.leaf.certificate.issuer == pki.intermediate.certificate.subject)
        #expect(pki.intermediate.certificate.issuer == pki.root.certificate.subject)
        #expect(pki.serverChain.count == 2)
        let sans = try #require(try pki.leaf.certificate.extensions.subjectAlternativeNames)
        #expect(sans.count == 4)

        let expired = try pki.withLeaf(variant: .expired)
        #expect(expired.leaf.certificate.notValidAfter < Date())
        #expect(expired.root.certificate == pki.root.certificate)

        let selfSigned = try TestCertificates(variant: .selfSigned)
        #expect(selfSigned.leaf.certificate.issuer == selfSigned.leaf.certificate.subject)
        #expect(selfSigned.serverChain.count == 1)
    }
}
