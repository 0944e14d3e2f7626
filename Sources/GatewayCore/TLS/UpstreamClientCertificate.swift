public import Foundation

/// `tls.client_certificate` of an upstream, as read when the config loads:
/// the certificate chain and private key the gateway presents when the
/// upstream asks for a client certificate (mutual TLS).
///
/// Part of ``UpstreamTLSSettings`` and so of the pool key, but cheap there:
/// its hash is computed once from the file contents when it is read, and two
/// loads of unchanged files compare equal (a reload keeps the pooled
/// connections); changed files make a new key, so new connections present
/// the new certificate while old ones finish. The key bytes are never part of
/// a description, a log line or the redacted config.
public final class UpstreamClientCertificate: Sendable, Hashable, CustomStringConvertible {
    /// Absolute path of the PEM certificate chain (leaf first).
    public let certificateFile: String
    /// Absolute path of the PEM private key (mode 0600 or stricter).
    public let keyFile: String
    /// The certificate file's PEM bytes as read.
    public let chainPEM: [UInt8]
    /// The private key's PEM bytes as read. A secret: never print it.
    public let privateKeyPEM: [UInt8]
    /// The leaf's subject, RFC 4514 text (`CN=client,O=Example`).
    public let subject: String
    /// The leaf's notAfter.
    public let notValidAfter: Date
    private let contentHash: Int

    public init(
        certificateFile: String, keyFile: String, chainPEM: [UInt8], privateKeyPEM: [UInt8],
        subject: String, notValidAfter: Date
    ) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.chainPEM = chainPEM
        self.privateKeyPEM = privateKeyPEM
        self.subject = subject
        self.notValidAfter = notValidAfter
        var hasher = Hasher()
        hasher.combine(certificateFile)
        hasher.combine(keyFile)
        hasher.combine(chainPEM)
        hasher.combine(privateKeyPEM)
        contentHash = hasher.finalize()
    }

    public static func == (a: UpstreamClientCertificate, b: UpstreamClientCertificate) -> Bool {
        a === b
            || (a.contentHash == b.contentHash && a.certificateFile == b.certificateFile && a.keyFile == b.keyFile
                && a.chainPEM == b.chainPEM && a.privateKeyPEM == b.privateKeyPEM)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(contentHash)
    }

    /// Seconds from `now` until it expires (negative once expired).
    public func secondsLeft(now: Date = Date()) -> TimeInterval {
        notValidAfter.timeIntervalSince(now)
    }

    /// How close to expiry a certificate is warned about.
    public static let expiryWarningWindow: TimeInterval = 14 * 86400

    /// The subject and the files, never the key's content.
    public var description: String { "\(subject) (\(certificateFile), key \(keyFile))" }
}
