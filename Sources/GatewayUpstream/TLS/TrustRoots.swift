import Foundation
import GatewayCore
import NIOConcurrencyHelpers
import SwiftASN1
public import X509

/// Trusted roots, parsed once per PEM file and shared by every connection.
///
/// A bundle is re-parsed only when its file changes (size or modification time,
/// one `stat` per lookup), so a config reload that rewrites a `ca_file` in
/// place takes effect for new connections.
public final class TrustRootCache: Sendable {
    /// Where Linux distributions keep the system bundle, in the order tried.
    public static let systemBundlePaths = [
        "/etc/ssl/certs/ca-certificates.crt",  // Debian, Ubuntu, Arch, Alpine
        "/etc/pki/tls/certs/ca-bundle.crt",  // Fedora, RHEL
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // RHEL, CentOS
        "/etc/ssl/ca-bundle.pem",  // openSUSE
        "/etc/pki/tls/cacert.pem",  // OpenELEC
        "/etc/ssl/cert.pem",  // Alpine, macOS, BSDs
    ]

    /// Shared by all factories and the pins inspector of a process.
    public static let shared = TrustRootCache()

    private struct Entry {
        var size: Int64
        var modified: timespec
        var store: CertificateStore
        var generation: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var nextGeneration: UInt64 = 1
    }

    /// A parsed bundle and a number that changes whenever any bundle is (re)parsed,
    /// so results derived from a store can be keyed by it.
    struct Roots: Sendable {
        var store: CertificateStore
        var generation: UInt64
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    /// The roots of `caFile`, or of the system bundle when nil (`SSL_CERT_FILE`
    /// first, then ``systemBundlePaths``).
    public func store(caFile: String?) throws -> CertificateStore {
        try roots(caFile: caFile).store
    }

    func roots(caFile: String?) throws -> Roots {
        try roots(path: caFile ?? Self.systemBundlePath())
    }

    /// The first system bundle that exists.
    public static func systemBundlePath() throws -> String {
        var candidates: [String] = []
        if let fromEnvironment = ProcessInfo.processInfo.environment["SSL_CERT_FILE"], !fromEnvironment.isEmpty {
            candidates.append(fromEnvironment)
        }
        candidates += systemBundlePaths
        for path in candidates where FileManager.default.isReadableFile(atPath: path) {
            return path
        }
        throw GatewayError(
            .certificateInvalid,
            "no system CA bundle found (tried \(candidates.joined(separator: ", "))); set tls.ca_file",
            causeDescription: nil
        )
    }

    private func roots(path: String) throws -> Roots {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw GatewayError(
                .certificateInvalid,
                "cannot read CA file \(path): \(String(cString: strerror(errno)))",
                causeDescription: nil
            )
        }
        let size = Int64(info.st_size)
        let modified = info.st_mtim
        if let entry = state.withLockedValue({ $0.entries[path] }),
            entry.size == size, entry.modified.tv_sec == modified.tv_sec, entry.modified.tv_nsec == modified.tv_nsec
        {
            return Roots(store: entry.store, generation: entry.generation)
        }
        // Parse outside the lock; two first connections may both parse, which is harmless.
        let store = CertificateStore(try Self.parseBundle(path: path))
        return state.withLockedValue { state in
            let generation = state.nextGeneration
            state.nextGeneration += 1
            state.entries[path] = Entry(size: size, modified: modified, store: store, generation: generation)
            return Roots(store: store, generation: generation)
        }
    }

    /// Every certificate of a PEM bundle. Entries swift-certificates cannot parse
    /// (rare legacy roots) are skipped; a bundle with none at all is an error.
    static func parseBundle(path: String) throws -> [Certificate] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw GatewayError(.certificateInvalid, "cannot read CA file \(path)", cause: error)
        }
        let text = String(decoding: data, as: UTF8.self)
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: text)
        } catch {
            throw GatewayError(.certificateInvalid, "CA file \(path) is not a PEM bundle", cause: error)
        }
        let certificates = documents.compactMap { document -> Certificate? in
            guard document.discriminator == "CERTIFICATE" || document.discriminator == "TRUSTED CERTIFICATE" else {
                return nil
            }
            return try? Certificate(derEncoded: document.derBytes)
        }
        guard !certificates.isEmpty else {
            throw GatewayError(.certificateInvalid, "CA file \(path) holds no certificate", causeDescription: nil)
        }
        return certificates
    }
}
