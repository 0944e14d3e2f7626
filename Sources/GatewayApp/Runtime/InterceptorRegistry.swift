import GatewayConfig
import GatewayCore
import GatewayListener
import Logging
import NIOConcurrencyHelpers

/// The TLS interceptor (local CA + leaf cache) for a config, made when the first
/// config with an `intercept: true` upstream is applied and kept across reloads
/// while the CA files and cache size stay the same. Creating the CA on first use
/// is logged with its fingerprint.
final class InterceptorRegistry: Sendable {
    private struct Key: Hashable {
        var certPath: String
        var keyPath: String
        var cacheSize: Int
    }

    private let current = NIOLockedValueBox<(key: Key, interceptor: TLSInterceptor)?>(nil)

    /// The interceptor `config` needs: nil when no upstream intercepts. Throws a
    /// `CertificateAuthorityError` when the CA cannot be loaded or created.
    func interceptor(for config: GatewayConfig, events: any GatewayEvents, logger: Logger) throws -> TLSInterceptor? {
        guard config.upstreams.contains(where: \.intercept) else { return nil }
        let interceptor = try interceptor(for: config.interception, events: events, logger: logger)
        // SNI may only ask for a leaf of a host this config intercepts and allows.
        interceptor.allowSNI { host in
            config.upstream(forHost: host)?.intercept == true && config.access.isAllowed(host: host)
        }
        return interceptor
    }

    private func interceptor(for settings: InterceptionConfig, events: any GatewayEvents, logger: Logger) throws -> TLSInterceptor {
        let key = Key(certPath: settings.caCert, keyPath: settings.caKey, cacheSize: settings.leafCacheSize)
        return try current.withLockedValue { current in
            if let current, current.key == key { return current.interceptor }
            let (authority, created) = try LocalCertificateAuthority.loadOrCreate(certPath: key.certPath, keyPath: key.keyPath)
            let fingerprint = try authority.fingerprint
            if created {
                logger.notice(
                    "created the interception CA \(key.certPath): trust it in your clients (`gateway ca export` says how)",
                    metadata: ["ca_sha256": "\(fingerprint)", "key": "\(key.keyPath)"]
                )
            } else {
                logger.info("interception CA \(key.certPath)", metadata: ["ca_sha256": "\(fingerprint)"])
            }
            let interceptor = try TLSInterceptor(
                authority: authority, certificatePath: key.certPath, cacheSize: key.cacheSize, events: events, logger: logger
            )
            current = (key, interceptor)
            return interceptor
        }
    }
}
