import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// `upstreams[].tls.client_certificate`: both files read and checked at load,
/// each problem at its own key path; the key never quoted.
@Suite("Upstream client certificates")
struct ClientCertificateConfigTests {
    struct Files {
        var pki: TestCertificates
        var paths: TestCertificates.ClientPaths
        var directory: String
    }

    func files(keyMode: Int = 0o600, validFor: TimeInterval = 365 * 86400) throws -> Files {
        let pki = try TestCertificates()
        let directory = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-client-cert")
        let client = try pki.makeClientCertificate(commonName: "payments-client", validFor: validFor)
        return Files(pki: pki, paths: try pki.writeClientCertificate(client, to: directory, keyMode: keyMode), directory: directory)
    }

    func yaml(certificate: String, key: String) -> String {
        """
        upstreams:
          - name: pay
            hosts: [pay.example.com]
            tls:
              client_certificate:
                certificate_file: \(certificate)
                key_file: \(key)
        """
    }

    @Test func loadsTheChainAndKeyWithSubjectAndExpiry() throws {
        let f = try files()
        defer { try? FileManager.default.removeItem(atPath: f.directory) }
        let config = try #require(TestSupport.parse(yaml(certificate: f.paths.chain, key: f.paths.key)))
        let client = try #require(config.upstreams[0].tls.clientCertificate)
        #expect(client.subject.contains("CN=payments-client"))
        #expect(client.secondsLeft() > 364 * 86400)
        #expect(client.certificateFile == f.paths.chain)
        #expect(config.warnings.isEmpty, "\(config.warnings)")
        #expect(!client.description.contains("PRIVATE"), "the key never shows in a description")
        let redacted = config.redactedYAML()
        #expect(redacted.contains("key_file: \(f.paths.key)"))
        #expect(!redacted.contains("PRIVATE KEY"))
        // The same files loaded again: an equal setting (a reload keeps the pooled connections).
        let again = try #require(TestSupport.parse(yaml(certificate: f.paths.chain, key: f.paths.key)))
        #expect(again.upstreams[0].tls == config.upstreams[0].tls)
    }

    @Test func relativePathsResolveAgainstTheConfigDirectory() throws {
        let f = try files()
        defer { try? FileManager.default.removeItem(atPath: f.directory) }
        let configPath = (f.directory as NSString).appendingPathComponent("gateway.yaml")
        try yaml(certificate: "client-chain.pem", key: "./client-key.pem").write(toFile: configPath, atomically: true, encoding: .utf8)
        let config = try ConfigLoader.load(path: configPath, environment: [:])
        #expect(config.upstreams[0].tls.clientCertificate?.keyFile == f.paths.key)
    }

    @Test(arguments: [0o640, 0o604, 0o660])
    func aKeyOthersCanReadIsRefused(_ mode: Int) throws {
        let f = try files(keyMode: mode)
        defer { try? FileManager.default.removeItem(atPath: f.directory) }
        TestSupport.expectError(
            yaml(certificate: f.paths.chain, key: f.paths.key),
            keyPath: "upstreams[0].tls.client_certificate.key_file", contains: "chmod 600")
    }

    @Test func aMissingCertificateFileIsNamed() throws {
        let f = try files()
        defer { try? FileManager.default.removeItem(atPath: f.directory) }
        TestSupport.expectError(
            yaml(certificate: "/nonexistent/client.pem", key: f.paths.key),
            keyPath: "upstreams[0].tls.client_certificate.certificate_file", contains: "does not exist")
    }

    @Test func aKeyOfAnotherCertificateIsRefusedWithoutQuotingIt() throws {
        let f = try files()
        let other = try files()
        defer {
            try? FileManager.default.removeItem(atPath: f.directory)
            try? FileManager.default.removeItem(atPath: other.directory)
        }
        let error = try #require(TestSupport.error(of: yaml(certificate: f.paths.chain, key: other.paths.key)))
        #expect(error.keyPath == "upstreams[0].tls.client_certificate.key_file")
        #expect(error.message.contains("is not the key of the certificate"), "\(error.message)")
        let keyText = try String(contentsOfFile: other.paths.key, encoding: .utf8)
        let keyLine = keyText.split(separator: "\n")[1]
        #expect(!"\(error)".contains(keyLine))
    }

    @Test func aCertificateFileThatIsNoPEMIsRefused() throws {
        let f = try files()
        defer { try? FileManager.default.removeItem(atPath: f.directory) }
        try "not a certificate\n".write(toFile: f.paths.chain, atomically: true, encoding: .utf8)
        TestSupport.expectError(
            yaml(certificate: f.paths.chain, key: f.paths.key),
            keyPath: "upstreams[0].tls.client_certificate.certificate_file", contains: "PEM")
    }

    @Test func aMissingKeyFileKeyIsReportedAtTheMapping() throws {
        let f = try files()
        defer { try? FileManager.default.removeItem(atPath: f.directory) }
        TestSupport.expectError(
            """
            upstreams:
              - name: pay
                hosts: [pay.example.com]
                tls:
                  client_certificate:
                    certificate_file: \(f.paths.chain)
                    keyfile: x
            """,
            keyPath: "upstreams[0].tls.client_certificate.keyfile", contains: "key_file")
    }

    @Test func oneExpiringWithinFourteenDaysIsWarnedAbout() throws {
        let f = try files(validFor: 5 * 86400)
        defer { try? FileManager.default.removeItem(atPath: f.directory) }
        let config = try #require(TestSupport.parse(yaml(certificate: f.paths.chain, key: f.paths.key)))
        let warning = try #require(config.warnings.first)
        #expect(warning.hasPrefix("upstreams[0].tls.client_certificate: "), "\(warning)")
        #expect(warning.contains("expires within 14 days"), "\(warning)")
        #expect(config.clientCertificateExpiries["pay"] == config.upstreams[0].tls.clientCertificate?.notValidAfter)
    }

    @Test func noSecretsReadsTheCertificateButNotTheKey() throws {
        let f = try files(keyMode: 0o644)
        defer { try? FileManager.default.removeItem(atPath: f.directory) }
        let config = try ConfigLoader.parse(
            yaml: yaml(certificate: f.paths.chain, key: f.paths.key), file: TestSupport.file, environment: [:], secrets: .skip)
        let client = try #require(config.upstreams[0].tls.clientCertificate)
        #expect(client.subject.contains("payments-client"))
        #expect(client.privateKeyPEM.isEmpty)
    }
}
