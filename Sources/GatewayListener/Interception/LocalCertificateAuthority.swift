import Crypto
public import Foundation
import GatewayConfig
import SwiftASN1
public import X509

/// The gateway's local CA for HTTPS interception: a P-256 key and a self-signed
/// CA certificate. It mints short-lived leaf certificates for intercepted hosts
/// (SAN = the host, serverAuth only, not a CA), all with one leaf key.
///
/// Keys stay `Certificate.PrivateKey` (swift-crypto's `P256.Signing.PrivateKey`
/// is not `Sendable` in 3.x).
public struct LocalCertificateAuthority: Sendable {
    public let certificate: Certificate
    public let privateKey: Certificate.PrivateKey

    /// How long a minted leaf is valid (and how far back it starts, for clock skew).
    public static let leafValidity: TimeInterval = 7 * 86400
    public static let leafBackdate: TimeInterval = 3600
    /// How long a new CA is valid.
    public static let caValidity: TimeInterval = 10 * 365 * 86400

    public init(certificate: Certificate, privateKey: Certificate.PrivateKey) {
        self.certificate = certificate
        self.privateKey = privateKey
    }

    /// A new CA named after the machine, so a user can tell theirs apart in a trust store.
    public static func generate(now: Date = Date()) throws -> LocalCertificateAuthority {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let host = ProcessInfo.processInfo.hostName
        let subject = try DistinguishedName {
            OrganizationName("Gateway local CA")
            CommonName("Gateway interception CA (\(host.prefix(32)))")
        }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            SubjectKeyIdentifier(hash: key.publicKey)
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: key.publicKey,
            notValidBefore: now.addingTimeInterval(-leafBackdate),
            notValidAfter: now.addingTimeInterval(caValidity),
            issuer: subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: key
        )
        return LocalCertificateAuthority(certificate: certificate, privateKey: key)
    }

    /// A leaf for `serverName` (a DNS name or an IP address) with `leafKey`'s public key.
    public func mintLeaf(for serverName: String, leafKey: Certificate.PrivateKey, now: Date = Date()) throws -> Certificate {
        let name: GeneralName
        if let address = IPAddressText.bytes(serverName) {
            name = .ipAddress(ASN1OctetString(contentBytes: address[...]))
        } else {
            name = .dnsName(serverName)
        }
        let subject = try DistinguishedName {
            OrganizationName("Gateway local CA")
            CommonName(String(serverName.prefix(64)))
        }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.serverAuth])
            SubjectAlternativeNames([name])
            AuthorityKeyIdentifier(keyIdentifier: issuerKeyIdentifier)
        }
        // Never valid beyond the CA itself.
        let notValidAfter = min(now.addingTimeInterval(Self.leafValidity), certificate.notValidAfter)
        return try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: leafKey.publicKey,
            notValidBefore: now.addingTimeInterval(-Self.leafBackdate),
            notValidAfter: notValidAfter,
            issuer: certificate.subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: privateKey
        )
    }

    /// The CA's own subject key identifier (what a verifier matches the leaf's
    /// authority key identifier against), or the SHA-1 of its key when it has none.
    var issuerKeyIdentifier: ArraySlice<UInt8> {
        (try? certificate.extensions.subjectKeyIdentifier)??.keyIdentifier
            ?? SubjectKeyIdentifier(hash: certificate.publicKey).keyIdentifier
    }

    /// The CA certificate in DER.
    public var certificateDER: [UInt8] {
        get throws {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        }
    }

    public var certificatePEM: String {
        get throws { try certificate.serializeAsPEM().pemString + "\n" }
    }

    /// `AB:CD:...`: the SHA-256 fingerprint of the certificate, as `openssl x509 -fingerprint -sha256` prints it.
    public var fingerprint: String {
        get throws {
            SHA256.hash(data: try certificateDER).map { byte in
                let hex = String(byte, radix: 16, uppercase: true)
                return byte < 16 ? "0" + hex : hex
            }.joined(separator: ":")
        }
    }
}
