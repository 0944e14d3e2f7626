import NIOConcurrencyHelpers
public import NIOSSL

/// The client contexts: one per ALPN offer (BoringSSL sets the offered
/// protocols on the context, not per handler), each built on first use and
/// shared by every connection offering the same. Nothing else differs between
/// them: BoringSSL's trust store is never consulted (the verification callback
/// decides), so TLS settings need no context of their own.
extension PinningTLSHandlerFactory {
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

    /// The shared HTTP/1.1 client context (ALPN `http/1.1`), built on first use.
    public func sslContext() throws -> NIOSSLContext {
        try sslContext(alpn: .http1)
    }

    /// The shared client context offering `alpn`, built on first use.
    public func sslContext(alpn: UpstreamALPNOffer) throws -> NIOSSLContext {
        try contexts.withLockedValue { cached in
            if let context = cached[alpn] { return context }
            let made = try NIOSSLContext(configuration: Self.clientConfiguration(alpn: alpn))
            cached[alpn] = made
            return made
        }
    }
}
