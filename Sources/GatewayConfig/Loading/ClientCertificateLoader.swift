import Foundation
public import GatewayCore
import SwiftASN1
import X509

/// Reads `tls.client_certificate`'s two files into an ``UpstreamClientCertificate``:
/// the PEM chain (leaf first) and the PEM private key, refused when group or
/// others may read or write it or another user owns it (as the interception
/// CA key is), and when it is not the key of the leaf.
public enum ClientCertificateLoader {
    /// What is wrong, and with which of the two files.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public enum File: Sendable { case certificate, key }
        public let file: File
        public let message: String
        public var description: String { message }
    }

    /// Reads both files; with `readKey` false (``SecretLoading/skip``) the key
    /// file is not opened and the key bytes are empty (never used to connect).
    public static func load(certificateFile: String, keyFile: String, readKey: Bool = true) throws(Problem) -> UpstreamClientCertificate {
        let chainPEM: [UInt8]
        do {
            chainPEM = try readFile(certificateFile, private: false)
        } catch {
            throw Problem(file: .certificate, message: error.message)
        }
        let certificates: [Certificate]
        do {
            let documents = try PEMDocument.parseMultiple(pemString: String(decoding: chainPEM, as: UTF8.self))
            certificates = try documents.filter { $0.discriminator == "CERTIFICATE" }.map { try Certificate(pemDocument: $0) }
        } catch {
            throw Problem(file: .certificate, message: "certificate file \(certificateFile) is not a PEM certificate chain")
        }
        guard let leaf = certificates.first else {
            throw Problem(file: .certificate, message: "certificate file \(certificateFile) holds no PEM certificate")
        }
        var keyPEM: [UInt8] = []
        if readKey {
            do {
                keyPEM = try readFile(keyFile, private: true)
            } catch {
                throw Problem(file: .key, message: error.message)
            }
            let key: Certificate.PrivateKey
            do {
                key = try Certificate.PrivateKey(pemEncoded: String(decoding: keyPEM, as: UTF8.self))
            } catch {
                // Never quote the file: it is a secret.
                throw Problem(file: .key, message: "key file \(keyFile) is not an unencrypted PEM private key (RSA, EC or PKCS#8)")
            }
            guard key.publicKey == leaf.publicKey else {
                throw Problem(file: .key, message: "key file \(keyFile) is not the key of the certificate in \(certificateFile) (\(leaf.subject))")
            }
        }
        return UpstreamClientCertificate(
            certificateFile: certificateFile, keyFile: keyFile, chainPEM: chainPEM, privateKeyPEM: keyPEM,
            subject: leaf.subject.description, notValidAfter: leaf.notValidAfter)
    }

    struct ReadError: Error {
        var message: String
    }

    /// The bytes of `path` through one descriptor; `private` files are refused
    /// when group or others have any access or another user owns them (`fstat`
    /// on that descriptor: what is checked is what is read).
    static func readFile(_ path: String, private: Bool) throws(ReadError) -> [UInt8] {
        let what = `private` ? "key file" : "certificate file"
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let reason = errno == ENOENT ? "does not exist" : "cannot be read (\(String(cString: strerror(errno))))"
            throw ReadError(message: "\(what) \(path) \(reason)")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw ReadError(message: "\(what) \(path) cannot be read (\(String(cString: strerror(errno))))")
        }
        guard Int(info.st_mode) & 0o170000 == 0o100000 else { throw ReadError(message: "\(what) \(path) is not a regular file") }
        if `private` {
            let mode = Int(info.st_mode) & 0o777
            if mode & 0o077 != 0 {
                throw ReadError(
                    message: "key file \(path) is accessible by other users (mode \(String(mode, radix: 8))); run `chmod 600 \(path)`")
            }
            if info.st_uid != geteuid() {
                throw ReadError(message: "key file \(path) belongs to uid \(info.st_uid), not to this user (uid \(geteuid()))")
            }
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= 1 << 20 {
            let count = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            guard count > 0 else {
                throw ReadError(message: "\(what) \(path) cannot be read (\(String(cString: strerror(errno))))")
            }
            bytes += chunk[..<count]
        }
        throw ReadError(message: "\(what) \(path) is larger than 1 MiB")
    }
}
