import Crypto
public import GatewayCore
public import NIOSSL
import SwiftASN1
public import X509

/// Computes SPKI pins: SHA-256 over the DER `SubjectPublicKeyInfo` (algorithm
/// identifier + key bits), as HPKP (RFC 7469), OkHttp and Envoy do. Equal to
///
///     openssl x509 -pubkey -noout -in c.pem | openssl pkey -pubin -outform der \
///       | openssl dgst -sha256 -binary | base64
///
/// The SPKI bytes are taken exactly as they appear in the certificate (not
/// re-encoded). Note that `Certificate.PublicKey.subjectPublicKeyInfoBytes` is
/// only the inner key bits and would give wrong pins.
public enum SPKIHasher {
    /// The pin of a certificate's public key.
    public static func pin(for certificate: Certificate) throws -> SPKIPin {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return try pin(forDER: serializer.serializedBytes)
    }

    /// The pin of a DER-encoded certificate.
    public static func pin(forDER der: [UInt8]) throws -> SPKIPin {
        pin(subjectPublicKeyInfoDER: try subjectPublicKeyInfoDER(certificateDER: der))
    }

    /// The pin of a certificate as NIOSSL hands it over.
    public static func pin(for certificate: NIOSSLCertificate) throws -> SPKIPin {
        try pin(forDER: certificate.toDERBytes())
    }

    /// The pin of a DER `SubjectPublicKeyInfo` (what `openssl pkey -pubin -outform der` prints).
    public static func pin<Bytes: Sequence>(subjectPublicKeyInfoDER spki: Bytes) -> SPKIPin where Bytes.Element == UInt8 {
        var hasher = SHA256()
        hasher.update(data: Array(spki))
        return SPKIPin(digest: Array(hasher.finalize()))
    }

    /// The `SubjectPublicKeyInfo` element of a DER certificate, byte for byte:
    /// Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signature },
    /// TBSCertificate ::= SEQUENCE { [0] version OPTIONAL, serialNumber, signature,
    /// issuer, validity, subject, subjectPublicKeyInfo, ... }.
    static func subjectPublicKeyInfoDER(certificateDER der: [UInt8]) throws -> ArraySlice<UInt8> {
        let certificate = try DER.parse(der)
        guard case .constructed(let parts) = certificate.content,
            let tbs = parts.first(where: { _ in true }),
            case .constructed(let fields) = tbs.content
        else { throw SPKIExtractionError() }
        var index = 0
        for field in fields {
            // The optional explicit [0] version does not count.
            if index == 0, field.identifier.tagClass == .contextSpecific, field.identifier.tagNumber == 0 {
                continue
            }
            if index == 5 {
                guard field.identifier == .sequence else { throw SPKIExtractionError() }
                return field.encodedBytes
            }
            index += 1
        }
        throw SPKIExtractionError()
    }

    struct SPKIExtractionError: Error, CustomStringConvertible {
        var description: String { "certificate DER has no SubjectPublicKeyInfo where RFC 5280 puts it" }
    }
}
