import Crypto
import Foundation
public import GatewayCore
public import Logging
import NIOConcurrencyHelpers
import NIOSSL
import SwiftASN1
import X509

/// Terminates TLS of intercepted `CONNECT`s: a server `NIOSSLContext` per host,
/// presenting a leaf minted by the local CA (cached, LRU), ALPN `h2` then `http/1.1`.
/// A client whose SNI names another host the config intercepts than its
/// `CONNECT` gets a leaf for the SNI name; any other SNI gets the CONNECT host's
/// leaf. Leaves are minted again half way through their validity. One leaf key
/// serves every leaf (made at start, never written).
///
/// Long-lived: made once per CA and kept across config reloads.
public final class TLSInterceptor: Sendable {
    public let authority: LocalCertificateAuthority
    /// Where the CA certificate is (for `curl --cacert` lines and messages).
    public let certificatePath: String
    private let minter: LeafMinter
    private let contexts: LRUCache<String, CachedContext>
    private let events: any GatewayEvents
    private let logger: Logger
    private let reportedUntrusted = NIOLockedValueBox(Set<String>())
    /// Which names a client's SNI may ask a leaf for: hosts the current config
    /// intercepts (set on every config apply; contexts outlive reloads).
    private let sniAllowed = NIOLockedValueBox<@Sendable (String) -> Bool>({ _ in false })

    /// Hosts remembered for "logged once per host" (a wildcard upstream must not grow it forever).
    static let maxReportedHosts = 1024

    private struct CachedContext: Sendable {
        let context: NIOSSLContext
        let renewAfter: Date
    }

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

    /// Sets which SNI names may get a leaf of their own (the hosts the config intercepts).
    public func allowSNI(_ isIntercepted: @escaping @Sendable (String) -> Bool) {
        sniAllowed.withLockedValue { $0 = isIntercepted }
    }

    /// The server context for a `CONNECT` to `host`, minting its leaf on a miss
    /// (or when the cached leaf is past half its validity).
    func serverContext(forHost host: String, upstream: String) throws -> NIOSSLContext {
        let key = host.lowercased()
        if let cached = contexts.value(for: key), cached.renewAfter > Date() {
            events.interceptionLeaf(upstream: upstream, cached: true)
            return cached.context
        }
        let started = ContinuousClock.now
        let identity = try minter.identity(for: key)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: identity.chain.map { .certificate($0) },
            privateKey: .privateKey(minter.nioLeafKey)
        )
        // HTTP/2 first (gRPC needs it; browsers and URLSession prefer it), else HTTP/1.1.
        configuration.applicationProtocols = ["h2", "http/1.1"]
        configuration.minimumTLSVersion = .tlsv12
        // A server needs no close_notify back: do not let a client that never
        // answers one hold a closing connection (and a shutdown) for 5 s.
        configuration.shutdownTimeout = .milliseconds(250)
        let minter = self.minter
        let sniAllowed = self.sniAllowed
        configuration.sslContextCallback = { values, promise in
            // SNI naming another intercepted host than the CONNECT: present a leaf
            // for that name. Any other name gets the CONNECT host's leaf: the
            // gateway never vouches for a host it was not configured to intercept.
            guard let sni = values.serverHostname?.lowercased(), sni != key,
                  sniAllowed.withLockedValue({ $0 })(sni) else {
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
        contexts.insert(CachedContext(context: context, renewAfter: identity.renewAfter), for: key)
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
        let first = reportedUntrusted.withLockedValue {
            $0.count < Self.maxReportedHosts && $0.insert(host.lowercased()).inserted
        }
        guard first else { return }
        let fingerprint = (try? authority.fingerprint) ?? "?"
        logger.warning(
            "a client refused the gateway's interception CA for \(host): it does not trust it. Export it with `gateway ca export` and add it to the client's trust store (logged once per host)",
            metadata: ["host": "\(host)", "ca": "\(certificatePath)", "ca_sha256": "\(fingerprint)"]
        )
    }
}
