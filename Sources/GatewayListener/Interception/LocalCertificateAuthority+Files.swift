import Foundation
import GatewayCore
import X509

/// Why the local CA could not be loaded or created: names the file and what is wrong.
public struct CertificateAuthorityError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let problem: String

    public var description: String { "interception CA: \(path): \(problem)" }
}

extension LocalCertificateAuthority {
    /// Loads the CA from `certPath` and `keyPath`, or creates both when neither
    /// exists (key written with mode 0600, its directory 0700 when created).
    /// Refuses a key readable or writable by group or others, and a half-present pair.
    /// An exclusive `flock` on `<ca_key>.lock` covers the check and the creation, so
    /// a `gateway ca init` and a `gateway run` starting together agree on one CA.
    public static func loadOrCreate(certPath: String, keyPath: String) throws -> (authority: LocalCertificateAuthority, created: Bool) {
        try createDirectories(for: [certPath, keyPath])
        let lockPath = keyPath + ".lock"
        let lock = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard lock >= 0 else {
            throw CertificateAuthorityError(path: lockPath, problem: "cannot create (\(String(cString: strerror(errno))))")
        }
        defer { close(lock) }  // releases the lock
        guard flock(lock, LOCK_EX) == 0 else {
            throw CertificateAuthorityError(path: lockPath, problem: "cannot lock (\(String(cString: strerror(errno))))")
        }
        let files = FileManager.default
        switch (files.fileExists(atPath: certPath), files.fileExists(atPath: keyPath)) {
        case (true, true):
            return (try load(certPath: certPath, keyPath: keyPath), false)
        case (false, false):
            let authority = try generate()
            try authority.write(certPath: certPath, keyPath: keyPath)
            return (authority, true)
        case (true, false):
            throw CertificateAuthorityError(path: keyPath, problem: "missing, but the CA certificate \(certPath) exists; restore the key, or remove both files to make a new CA")
        case (false, true):
            throw CertificateAuthorityError(path: certPath, problem: "missing, but the CA key \(keyPath) exists; restore the certificate, or remove both files to make a new CA")
        }
    }

    /// Loads an existing CA; the key file must be private to its owner.
    public static func load(certPath: String, keyPath: String) throws -> LocalCertificateAuthority {
        let keyPEM = try readPrivateKeyFile(keyPath)
        let certificate: Certificate
        let key: Certificate.PrivateKey
        do {
            certificate = try Certificate(pemEncoded: String(contentsOfFile: certPath, encoding: .utf8))
        } catch {
            throw CertificateAuthorityError(path: certPath, problem: "not a PEM certificate (\(error))")
        }
        do {
            key = try Certificate.PrivateKey(pemEncoded: keyPEM)
        } catch {
            throw CertificateAuthorityError(path: keyPath, problem: "not a PEM private key")
        }
        guard key.publicKey == certificate.publicKey else {
            throw CertificateAuthorityError(path: keyPath, problem: "does not match the CA certificate \(certPath)")
        }
        guard case .some(.some(let constraints)) = try? certificate.extensions.basicConstraints,
              case .isCertificateAuthority = constraints else {
            throw CertificateAuthorityError(path: certPath, problem: "not a CA certificate (basicConstraints CA:TRUE is missing)")
        }
        guard certificate.notValidAfter > Date().addingTimeInterval(LocalCertificateAuthority.leafValidity) else {
            throw CertificateAuthorityError(
                path: certPath,
                problem: "the CA expires \(certificate.notValidAfter) (within the \(Int(LocalCertificateAuthority.leafValidity / 86400)) days a leaf lasts); remove both CA files to make a new one, and trust the new one in your clients"
            )
        }
        return LocalCertificateAuthority(certificate: certificate, privateKey: key)
    }

    /// Reads the key file through one descriptor, refusing it when group or others
    /// may read or write it, or when another user owns it (checked with `fstat` on
    /// that descriptor: what is checked is what is read; symlinks are followed).
    static func readPrivateKeyFile(_ keyPath: String) throws -> String {
        let fd = open(keyPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CertificateAuthorityError(path: keyPath, problem: "cannot be read (\(String(cString: strerror(errno))))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw CertificateAuthorityError(path: keyPath, problem: "cannot be read (\(String(cString: strerror(errno))))")
        }
        let mode = Int(info.st_mode) & 0o777
        if mode & 0o077 != 0 {
            throw CertificateAuthorityError(
                path: keyPath,
                problem: "the CA private key is accessible by other users (mode \(String(mode, radix: 8))); run `chmod 600 \(keyPath)`"
            )
        }
        if info.st_uid != geteuid() {
            throw CertificateAuthorityError(
                path: keyPath, problem: "the CA private key belongs to uid \(info.st_uid), not to this user (uid \(geteuid()))")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { break }
            guard count > 0 else {
                throw CertificateAuthorityError(path: keyPath, problem: "cannot be read (\(String(cString: strerror(errno))))")
            }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes the key (mode 0600 from its first byte, so it is never readable by
    /// others, not even briefly) and the certificate (0644), each atomically
    /// (``PrivateFile/write(_:to:permissions:durable:)``: a new file renamed into
    /// place, `fsync`ed), their missing directories created with mode 0700.
    func write(certPath: String, keyPath: String) throws {
        try Self.createDirectories(for: [certPath, keyPath])
        let keyPEM = try privateKey.serializeAsPEM().pemString + "\n"
        try Self.writeFile(keyPath, Array(keyPEM.utf8), permissions: 0o600)
        try Self.writeFile(certPath, Array(certificatePEM.utf8), permissions: 0o644)
    }

    /// The directories of `paths`, made 0700 when missing (each missing parent too).
    static func createDirectories(for paths: [String]) throws {
        for path in paths {
            let directory = (path as NSString).deletingLastPathComponent
            guard !directory.isEmpty else { continue }
            do {
                try PrivateFile.createDirectory(directory)
            } catch let error as PrivateFileError {
                throw CertificateAuthorityError(path: error.path, problem: "cannot create the directory (\(error.reason))")
            }
        }
    }

    /// Writes `bytes` to `path` with mode `permissions` (see ``write(certPath:keyPath:)``).
    private static func writeFile(_ path: String, _ bytes: [UInt8], permissions: Int) throws {
        do {
            try PrivateFile.write(bytes, to: path, permissions: permissions, durable: true)
        } catch let error as PrivateFileError {
            throw CertificateAuthorityError(path: path, problem: "cannot \(error.operation) (\(error.reason))")
        }
    }
}
