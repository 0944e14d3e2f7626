import Crypto
import Foundation
public import NIOSSL
import SwiftASN1
public import X509

/// One certificate made for tests, with its private key and PEM forms.
public struct TestCertificate: Sendable {
    public let certificate: Certificate
    public let privateKey: Certificate.PrivateKey

    /// The certificate in DER.
    public var derBytes: [UInt8] {
        get throws {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        }
    }

    public var certificatePEM: String {
        get throws { try certificate.serializeAsPEM().pemString }
    }

    public var privateKeyPEM: String {
        get throws { try privateKey.serializeAsPEM().pemString }
    }

    public func nioCertificate() throws -> NIOSSLCertificate {
        try NIOSSLCertificate(bytes: derBytes, format: .der)
    }

    public func nioPrivateKey() throws -> NIOSSLPrivateKey {
        try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
    }
}

/// A test PKI made at run time with swift-certificates: a root CA, an
/// intermediate CA signed by the root, and a server leaf signed by the
/// intermediate (P-256 keys throughout).
///
/// The server presents leaf + intermediate, never the root; trust the root
/// through ``rootPEM`` / ``Paths/caBundle`` (the `ca_file` of an upstream).
///
/// ```swift
/// let pki = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
/// let paths = try pki.write(to: TestCertificates.makeTemporaryDirectory())
/// let serverContext = try pki.makeServerContext()
/// ```
public struct TestCertificates: Sendable {
    /// What is wrong (or not) with the leaf.
    public enum LeafVariant: Sendable, Hashable {
        /// Valid now, names as given, signed by the intermediate.
        case valid
        /// Signed by the intermediate, names as given, but expired a day ago.
        case expired
        /// Signed by the intermediate, valid, but only for `wrong.invalid`.
        case wrongHostname
        /// Self-signed: chains to no CA of this PKI (an unknown CA for every client).
        case selfSigned
    }

    public let root: TestCertificate
    public let intermediate: TestCertificate
    public let leaf: TestCertificate
    public let variant: LeafVariant

    /// Makes a new PKI (fresh keys every time).
    public init(
        dnsNames: [String] = ["localhost"],
        ipAddresses: [String] = ["127.0.0.1"],
        variant: LeafVariant = .valid
    ) throws {
        let now = Date()
        let root = try Self.makeCA(
            commonName: "Gateway Test Root CA",
            issuer: nil,
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(10 * 365 * 86400)
        )
        let intermediate = try Self.makeCA(
            commonName: "Gateway Test Intermediate CA",
            issuer: root,
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(5 * 365 * 86400)
        )
        self.root = root
        self.intermediate = intermediate
        self.variant = variant
        self.leaf = try Self.makeLeaf(
            issuer: intermediate, dnsNames: dnsNames, ipAddresses: ipAddresses, variant: variant, now: now)
    }

    private init(root: TestCertificate, intermediate: TestCertificate, leaf: TestCertificate, variant: LeafVariant) {
        self.root = root
        self.intermediate = intermediate
        self.leaf = leaf
        self.variant = variant
    }

    /// The same root and intermediate with a new leaf.
    public func withLeaf(
        dnsNames: [String] = ["localhost"],
        ipAddresses: [String] = ["127.0.0.1"],
        variant: LeafVariant = .valid
    ) throws -> TestCertificates {
        let leaf = try Self.makeLeaf(
            issuer: intermediate, dnsNames: dnsNames, ipAddresses: ipAddresses, variant: variant, now: Date())
        return TestCertificates(root: root, intermediate: intermediate, leaf: leaf, variant: variant)
    }

    /// What the server sends: leaf then intermediate; the self-signed leaf alone.
    public var serverChain: [TestCertificate] {
        variant == .selfSigned ? [leaf] : [leaf, intermediate]
    }

    /// The trusted root as a PEM bundle (for `caFile`).
    public var rootPEM: String {
        get throws { try root.certificatePEM }
    }

    /// The server chain as concatenated PEM (leaf first).
    public var serverChainPEM: String {
        get throws { try serverChain.map { try $0.certificatePEM }.joined(separator: "\n") + "\n" }
    }

    /// Files written by ``write(to:)``.
    public struct Paths: Sendable {
        /// Root certificate only: use as `ca_file`.
        public var caBundle: String
        public var root: String
        public var intermediate: String
        public var leaf: String
        /// Leaf private key (PKCS#8 PEM).
        public var leafKey: String
        /// Leaf + intermediate, as a server presents them.
        public var serverChain: String
    }

    /// Writes the PEM files into `dir` (created if missing).
    @discardableResult
    public func write(to dir: String) throws -> Paths {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        func put(_ name: String, _ text: String) throws -> String {
            let path = (dir as NSString).appendingPathComponent(name)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let caBundle = try put("ca-bundle.pem", rootPEM)
        return Paths(
            caBundle: caBundle,
            root: try put("root.pem", root.certificatePEM),
            intermediate: try put("intermediate.pem", intermediate.certificatePEM),
            leaf: try put("leaf.pem", leaf.certificatePEM),
            leafKey: try put("leaf.key", leaf.privateKeyPEM),
            serverChain: try put("server-chain.pem", serverChainPEM)
        )
    }

    /// TLS configuration for a server presenting ``serverChain`` with the leaf key.
    public func makeServerConfiguration() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try serverChain.map { .certificate(try $0.nioCertificate()) },
            privateKey: .privateKey(try leaf.nioPrivateKey())
        )
        configuration.applicationProtocols = ["http/1.1"]
        return configuration
    }

    /// A server `NIOSSLContext` presenting leaf + intermediate (not the root).
    public func makeServerContext() throws -> NIOSSLContext {
        try NIOSSLContext(configuration: makeServerConfiguration())
    }

    /// A fresh directory in the test process's scratch folder (``TestScratch``), gone when the process exits.
    public static func makeTemporaryDirectory(prefix: String = "gateway-certs") throws -> String {
        try TestScratch.directory(prefix)
    }

    // MARK: - Minting

    private static func makeCA(
        commonName: String,
        issuer: TestCertificate?,
        notValidBefore: Date,
        notValidAfter: Date
    ) throws -> TestCertificate {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let subject = try DistinguishedName {
            OrganizationName("Gateway Tests")
            CommonName(commonName)
        }
        let issuerName = issuer?.certificate.subject ?? subject
        let issuerKey = issuer?.privateKey ?? key
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: issuer == nil ? nil : 0))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            SubjectKeyIdentifier(hash: key.publicKey)
            if let issuer {
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: issuer.certificate.publicKey).keyIdentifier)
            }
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: key.publicKey,
            notValidBefore: notValidBefore,
            notValidAfter: notValidAfter,
            issuer: issuerName,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: issuerKey
        )
        return TestCertificate(certificate: certificate, privateKey: key)
    }

    private static func makeLeaf(
        issuer: TestCertificate,
        dnsNames: [String],
        ipAddresses: [String],
        variant: LeafVariant,
        now: Date
    ) throws -> TestCertificate {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let names: [GeneralName]
        if variant == .wrongHostname {
            names = [.dnsName("wrong.invalid")]
        } else {
            names = try dnsNames.map { .dnsName($0) } + ipAddresses.map { .ipAddress(try Self.ipAddressBytes($0)) }
        }
        let commonName = variant == .wrongHostname ? "wrong.invalid" : (dnsNames.first ?? ipAddresses.first ?? "leaf")
        let subject = try DistinguishedName {
            OrganizationName("Gateway Tests")
            CommonName(commonName)
        }
        let notValidBefore: Date
        let notValidAfter: Date
        if variant == .expired {
            notValidBefore = now.addingTimeInterval(-30 * 86400)
            notValidAfter = now.addingTimeInterval(-86400)
        } else {
            notValidBefore = now.addingTimeInterval(-3600)
            notValidAfter = now.addingTimeInterval(365 * 86400)
        }
        let selfSigned = variant == .selfSigned
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.serverAuth])
            SubjectAlternativeNames(names)
            SubjectKeyIdentifier(hash: key.publicKey)
            if !selfSigned {
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: issuer.certificate.publicKey).keyIdentifier)
            }
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: key.publicKey,
            notValidBefore: notValidBefore,
            notValidAfter: notValidAfter,
            issuer: selfSigned ? subject : issuer.certificate.subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: selfSigned ? key : issuer.privateKey
        )
        return TestCertificate(certificate: certificate, privateKey: key)
    }

    struct InvalidIPAddress: Error, CustomStringConvertible {
        var text: String
        var description: String { "not an IP address: \(text)" }
    }

    static func ipAddressBytes(_ text: String) throws -> ASN1OctetString {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return ASN1OctetString(contentBytes: withUnsafeBytes(of: &v4) { Array($0) }[...])
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return ASN1OctetString(contentBytes: withUnsafeBytes(of: &v6) { Array($0) }[...])
        }
        throw InvalidIPAddress(text: text)
    }
}
