import Crypto
public import Foundation
import SwiftASN1
public import X509

extension TestCertificates {
    /// A client certificate (ExtendedKeyUsage clientAuth) signed by this PKI's
    /// intermediate, valid from an hour ago for `validFor` (negative: expired).
    public func makeClientCertificate(commonName: String = "gateway-test-client", validFor: TimeInterval = 365 * 86400) throws -> TestCertificate {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let subject = try DistinguishedName {
            OrganizationName("Gateway Tests")
            CommonName(commonName)
        }
        let now = Date()
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.clientAuth])
            SubjectKeyIdentifier(hash: key.publicKey)
            AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: intermediate.certificate.publicKey).keyIdentifier)
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: key.publicKey,
            notValidBefore: now.addingTimeInterval(-3600 - max(0, -validFor)),
            notValidAfter: now.addingTimeInterval(validFor),
            issuer: intermediate.certificate.subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: intermediate.privateKey
        )
        return TestCertificate(certificate: certificate, privateKey: key)
    }

    /// Files of a client certificate written by ``writeClientCertificate(_:to:keyMode:)``.
    public struct ClientPaths: Sendable {
        /// Client leaf then intermediate: `tls.client_certificate.certificate_file`.
        public var chain: String
        /// The client key, mode `keyMode` (0600 unless told).
        public var key: String
    }

    /// Writes `client`'s chain (leaf + this PKI's intermediate) and key into `dir`.
    public func writeClientCertificate(_ client: TestCertificate, to dir: String, name: String = "client", keyMode: Int = 0o600) throws -> ClientPaths {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let chain = (dir as NSString).appendingPathComponent("\(name)-chain.pem")
        let key = (dir as NSString).appendingPathComponent("\(name)-key.pem")
        let chainText = try client.certificatePEM + "\n" + intermediate.certificatePEM + "\n"
        try chainText.write(toFile: chain, atomically: true, encoding: .utf8)
        try (try client.privateKeyPEM + "\n").write(toFile: key, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: keyMode], ofItemAtPath: key)
        return ClientPaths(chain: chain, key: key)
    }
}
