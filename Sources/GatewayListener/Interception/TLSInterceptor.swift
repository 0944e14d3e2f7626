import Crypto
import Foundation
public import GatewayCore
public import Logging
import NIOConcurrencyHelpers
public import NIOSSL
import SwiftASN1
import X509

/// Terminates TLS of intercepted `CONNECT`s: a server `NIOSSLContext` per host,
/// presenting a leaf minted by the local CA (cached, LRU), ALPN `http/1.1` only.
/// A client whose SNI names another host than its `CONNECT` gets a leaf for the
/// SNI name. One leaf key serves every leaf (made at start, never written).
///
/// Long-lived: made once per CA and kept across config reloads.
public final class TLSInterceptor: Sendable {
    public let authority: LocalCertificateAuthority
    /// Where the CA certificate is (for `curl --cacert` lines and messages).
    public let certificatePath: String
    private let minter: LeafMinter
    private let contexts: LRUCache<String, NIOSSLContext>
    private let events: any GatewayEvents
    private let logger: Logger
    private let reportedUntrusted = NIOLockedValueBox(Set<String>())

    public init(
        authority: LocalCertificateAuthority,
        certificatePath: String,
        cacheSize: Int,
        events: any GatewayEvents,
        logger: Logger
    ) throws {
        self.authority = authority
        self.certificatePath = certificatePath
        self.minter = try LeafMinter(authority: authority, cacheSize: cacheSize)
        self.contexts = LRUCache(capacity: cacheSize)
        self.events = events
        self.logger = logger
    }

    /// Leaf certificates minted so far (cache misses).
    public var mintedCount: Int { minter.mintedCount }

    /// The server context for a `CONNECT` to `host`, minting its leaf on a miss.
    func serverContext(forHost host: String, upstream: String) throws -> NIOSSLContext {
        let key = host.lowercased()
        if let context = contexts.value(for: key) {
            events.interceptionLeaf(upstream: upstream, cached: true)
            return context
        }
        let started = ContinuousClock.now
        let identity = try minter.identity(for: key)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: identity.chain.map { .certificate($0) },
            privateKey: .privateKey(minter.nioLeafKey)
        )
        configuration.applicationProtocols = ["http/1.1"]
        configuration.minimumTLSVersion = .tlsv12
        let minter = self.minter
        configuration.sslContextCallback = { values, promise in
            // SNI naming another host than the CONNECT: present a leaf for that name.
            guard let sni = values.serverHostname?.lowercased(), sni != key else {
                promise.succeed(.noChanges)
                return
            }
            do {
                var override = NIOSSLContextConfigurationOverride()
                override.certificateChain = try minter.identity(for: sni).chain.map { .certificate($0) }
                override.privateKey = .privateKey(minter.nioLeafKey)
                promise.succeed(override)
            } catch {
                promise.fail(error)
            }
        }
        let context = try NIOSSLContext(configuration: configuration)
        contexts.insert(context, for: key)
        events.interceptionLeaf(upstream: upstream, cached: false)
        logger.debug(
            "minted an interception certificate",
            metadata: ["host": "\(key)", "ms": "\(((ContinuousClock.now - started).seconds * 100_000).rounded() / 100)"]
        )
        return context
    }

    /// A client's handshake failed: counted; logged once per host when the client
    /// does not trust the CA (the most common setup mistake), at debug otherwise.
    func handshakeFailed(host: String, upstream: String, error: any Error) {
        let reason = InterceptionHandshakeFailure.reason(for: error)
        events.interceptionHandshakeFailure(upstream: upstream, reason: reason)
        guard reason == InterceptionHandshakeFailure.untrustedCA else {
            logger.debug("intercepted TLS handshake failed", metadata: ["host": "\(host)", "reason": "\(reason)", "error": "\(error)"])
            return
        }
        let first = reportedUntrusted.withLockedValue { $0.insert(host.lowercased()).inserted }
        guard first else { return }
        let fingerprint = (try? authority.fingerprint) ?? "?"
        logger.warning(
            "a client refused the gateway's interception CA for \(host): it does not trust it. Export it with `gateway ca export` and add it to the client's trust store (logged once per host)",
            metadata: ["host": "\(host)", "ca": "\(certificatePath)", "ca_sha256": "\(fingerprint)"]
        )
    }
}

/// Mints leaf identities (leaf + CA certificate) and keeps them (LRU).
final class LeafMinter: Sendable {
    struct Identity: Sendable {
        let chain: [NIOSSLCertificate]
    }

    let authority: LocalCertificateAuthority
    let leafKey: Certificate.PrivateKey
    let nioLeafKey: NIOSSLPrivateKey
    private let nioCA: NIOSSLCertificate
    private let identities: LRUCache<String, Identity>
    private let minted = NIOLockedValueBox(0)

    init(authority: LocalCertificateAuthority, cacheSize: Int) throws {
        self.authority = authority
        let leafKey = Certificate.PrivateKey(P256.Signing.PrivateKey())
        self.leafKey = leafKey
        self.nioLeafKey = try NIOSSLPrivateKey(bytes: Array(leafKey.serializeAsPEM().pemString.utf8), format: .pem)
        self.nioCA = try NIOSSLCertificate(bytes: authority.certificateDER, format: .der)
        self.identities = LRUCache(capacity: cacheSize)
    }

    var mintedCount: Int { minted.withLockedValue { $0 } }

    func identity(for serverName: String) throws -> Identity {
        if let identity = identities.value(for: serverName) { return identity }
        let leaf = try authority.mintLeaf(for: serverName, leafKey: leafKey)
        var serializer = DER.Serializer()
        try serializer.serialize(leaf)
        let identity = Identity(chain: [try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der), nioCA])
        identities.insert(identity, for: serverName)
        minted.withLockedValue { $0 += 1 }
        return identity
    }
}
