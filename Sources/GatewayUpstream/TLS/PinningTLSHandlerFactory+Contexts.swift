public import GatewayCore
import NIOConcurrencyHelpers
public import NIOSSL

/// The client contexts: one per ALPN offer (BoringSSL sets the offered
/// protocols on the context, not per handler) and client certificate, each
/// built on first use and shared by every connection offering the same.
/// Nothing else differs between them: BoringSSL's trust store is never
/// consulted (the verification callback decides), so pins and CA files need
/// no context of their own. A client certificate does: BoringSSL presents the
/// context's chain and key when the server sends a CertificateRequest (and
/// nothing when it does not), so a connection with one costs the same per
/// request as one without.
extension PinningTLSHandlerFactory {
    struct ContextKey: Hashable, Sendable {
        var alpn: UpstreamALPNOffer
        var client: UpstreamClientCertificate?
    }

    /// The client TLS configuration of upstream connections: TLS 1.2+, ALPN
    /// `http/1.1`, and no BoringSSL trust roots (the verification callback decides).
    public static func clientConfiguration() -> TLSConfiguration {
        clientConfiguration(alpn: .http1)
    }

    /// The same, offering `alpn`.
    public static func clientConfiguration(alpn: UpstreamALPNOffer) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        configuration.certificateVerification = .fullVerification  // .none would skip our callback
        configuration.trustRoots = .certificates([])
        configuration.applicationProtocols = alpn.protocols
        return configuration
    }

    /// The same, presenting `client` (its chain, leaf first, and its key) when asked.
    public static func clientConfiguration(alpn: UpstreamALPNOffer, client: UpstreamClientCertificate?) throws -> TLSConfiguration {
        var configuration = clientConfiguration(alpn: alpn)
        if let client {
            configuration.certificateChain = try NIOSSLCertificate.fromPEMBytes(client.chainPEM).map { .certificate($0) }
            configuration.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: client.privateKeyPEM, format: .pem))
        }
        return configuration
    }

    /// The shared HTTP/1.1 client context (ALPN `http/1.1`), built on first use.
    public func sslContext() throws -> NIOSSLContext {
        try sslContext(alpn: .http1)
    }

    /// The shared client context offering `alpn`, built on first use.
    public func sslContext(alpn: UpstreamALPNOffer) throws -> NIOSSLContext {
        try sslContext(alpn: alpn, client: nil)
    }

    /// The shared client context offering `alpn` and presenting `client`, built
    /// on first use. A context for an older load of the same files (a reload
    /// read new contents) is dropped when the new one is made.
    public func sslContext(alpn: UpstreamALPNOffer, client: UpstreamClientCertificate?) throws -> NIOSSLContext {
        let key = ContextKey(alpn: alpn, client: client)
        if let context = contexts.withLockedValue({ $0[key] }) { return context }
        let made = try NIOSSLContext(configuration: Self.clientConfiguration(alpn: alpn, client: client))
        return contexts.withLockedValue { cached in
            if let context = cached[key] { return context }
            if let client {
                cached = cached.filter { existing, _ in
                    guard let other = existing.client, other != client else { return true }
                    return other.certificateFile != client.certificateFile || other.keyFile != client.keyFile
                }
            }
            cached[key] = made
            return made
        }
    }
}
