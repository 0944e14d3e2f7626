public import GatewayCore
public import Logging
import NIOConcurrencyHelpers
import NIOCore
import SwiftASN1
public import NIOSSL
import X509

/// Originates TLS to upstreams with our own certificate verification: chain and
/// hostname with swift-certificates (roots from `ca_file` or the system bundle),
/// then SPKI SHA-256 pins against every certificate of the validated chain
/// (leaf, intermediates and the trust-store root, even one the server never sent).
///
/// `NIOSSLClientHandler(context:serverHostname:customVerificationCallbackWithMetadata:)`
/// replaces BoringSSL's whole verification, so everything is checked here.
///
/// Costs per new connection: no context is built (one `NIOSSLContext` serves all
/// settings, because BoringSSL's own trust store is never consulted) and no
/// bundle is parsed (``TrustRootCache`` parses each PEM file once); what remains
/// is parsing the 2–3 presented certificates and checking their signatures.
public final class PinningTLSHandlerFactory: UpstreamTLSHandlerFactory {
    private let events: any GatewayEvents
    private let logger: Logger
    private let trustRoots: TrustRootCache
    private let context = NIOLockedValueBox<NIOSSLContext?>(nil)
    private let insecureHostsWarned = NIOLockedValueBox<Set<String>>([])

    public convenience init(events: any GatewayEvents = NoGatewayEvents(), logger: Logger) {
        self.init(events: events, logger: logger, trustRoots: .shared)
    }

    public init(events: any GatewayEvents = NoGatewayEvents(), logger: Logger, trustRoots: TrustRootCache) {
        self.events = events
        self.logger = logger
        self.trustRoots = trustRoots
    }

    /// The client TLS configuration every upstream connection uses: TLS 1.2+, ALPN
    /// `http/1.1`, and no BoringSSL trust roots (the verification callback decides).
    public static func clientConfiguration() -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        configuration.certificateVerification = .fullVerification  // .none would skip our callback
        configuration.trustRoots = .certificates([])
        configuration.applicationProtocols = ["http/1.1"]
        return configuration
    }

    /// The shared client context, built on first use.
    public func sslContext() throws -> NIOSSLContext {
        try context.withLockedValue { cached in
            if let cached { return cached }
            let made = try NIOSSLContext(configuration: Self.clientConfiguration())
            cached = made
            return made
        }
    }

    /// Loads (and caches) the trust roots `settings` need, so the first connection
    /// does not pay for parsing the bundle. Throws when the `ca_file` is unusable.
    public func prepare(_ settings: UpstreamTLSSettings) throws {
        _ = try sslContext()
        if !settings.insecureSkipVerify {
            _ = try trustRoots.store(caFile: settings.caFile)
        }
    }

    public func makeClientHandler(
        serverHostname: String,
        settings: UpstreamTLSSettings,
        upstreamName: String?
    ) throws -> (handler: NIOSSLClientHandler, report: TLSVerificationReport) {
        let report = TLSVerificationReport()
        let host = HostLiteral.bare(serverHostname)
        let sni: String? = HostLiteral.isIPAddress(host) ? nil : host

        // Resolve the roots now: a missing ca_file fails the connection attempt
        // with a clear error instead of a handshake failure.
        let roots: CertificateStore?
        if settings.insecureSkipVerify {
            roots = nil
            warnInsecureOnce(host: host)
        } else {
            roots = try trustRoots.store(caFile: settings.caFile)
        }

        let callback: @Sendable ([NIOSSLCertificate], EventLoopPromise<NIOSSLVerificationResultWithMetadata>) -> Void =
            { [self] presented, promise in
                // Nothing to check: answer without leaving the event loop.
                if roots == nil, settings.pins.isEmpty {
                    promise.succeed(.certificateVerified(VerificationMetadata(nil)))
                    return
                }
                Task {
                    let decision = await self.evaluate(
                        presented: presented, host: host, settings: settings, roots: roots, upstreamName: upstreamName)
                    switch decision {
                    case .accept(let validated):
                        promise.succeed(.certificateVerified(VerificationMetadata(validated)))
                    case .reject(let error):
                        report.failure = error
                        promise.succeed(.failed)
                    }
                }
            }
        let handler = try NIOSSLClientHandler(
            context: sslContext(),
            serverHostname: sni,
            customVerificationCallbackWithMetadata: callback
        )
        return (handler, report)
    }

    enum Decision {
        /// The validated chain for NIOSSL's metadata (nil when verification was skipped).
        case accept(NIOSSL.ValidatedCertificateChain?)
        case reject(GatewayError)
    }

    /// Verification as the callback runs it, without a socket.
    public func verify(
        presented: [NIOSSLCertificate],
        serverHostname: String,
        settings: UpstreamTLSSettings,
        upstreamName: String? = nil
    ) async throws -> [NIOSSLCertificate]? {
        let host = HostLiteral.bare(serverHostname)
        let roots = settings.insecureSkipVerify ? nil : try trustRoots.store(caFile: settings.caFile)
        switch await evaluate(
            presented: presented, host: host, settings: settings, roots: roots, upstreamName: upstreamName)
        {
        case .accept(let chain): return chain.map { Array($0) as [NIOSSLCertificate] }
        case .reject(let error): throw error
        }
    }

    func evaluate(
        presented: [NIOSSLCertificate],
        host: String,
        settings: UpstreamTLSSettings,
        roots: CertificateStore?,
        upstreamName: String?
    ) async -> Decision {
        let presentedDER: [[UInt8]]
        let parsed: [Certificate]
        do {
            presentedDER = try presented.map { try $0.toDERBytes() }
            parsed = try presentedDER.map { try Certificate(derEncoded: $0) }
        } catch {
            return reject(
                GatewayError(.certificateInvalid, "server certificate cannot be parsed", upstream: host, cause: error),
                host: host, upstreamName: upstreamName)
        }

        // 1. Chain and hostname, unless told to skip them.
        let chain: [(certificate: Certificate, der: [UInt8])]
        var validated: NIOSSL.ValidatedCertificateChain? = nil
        if let roots {
            switch await CertificateChainVerifier.verify(presented: parsed, serverHostname: host, roots: roots) {
            case .valid(let certificates):
                do {
                    var entries: [(certificate: Certificate, der: [UInt8])] = []
                    var nio: [NIOSSLCertificate] = []
                    for certificate in certificates {
                        if let index = parsed.firstIndex(of: certificate) {
                            entries.append((certificate, presentedDER[index]))
                            nio.append(presented[index])
                        } else {
                            // From the trust store: the server did not send it.
                            var serializer = DER.Serializer()
                            try serializer.serialize(certificate)
                            let der = serializer.serializedBytes
                            entries.append((certificate, der))
                            nio.append(try NIOSSLCertificate(bytes: der, format: .der))
                        }
                    }
                    chain = entries
                    validated = nio.isEmpty ? nil : NIOSSL.ValidatedCertificateChain(nio)
                } catch {
                    return reject(
                        GatewayError(.certificateInvalid, "certificate chain cannot be encoded", upstream: host, cause: error),
                        host: host, upstreamName: upstreamName)
                }
            case .invalid(let reason, let detail):
                return reject(
                    GatewayError(.certificateInvalid, reason, upstream: host, causeDescription: detail),
                    host: host, upstreamName: upstreamName)
            }
        } else {
            chain = Array(zip(parsed, presentedDER))
        }

        // 2. Pins, against every certificate of the chain.
        guard !settings.pins.isEmpty else { return .accept(validated) }
        let chainPins: [SPKIPin]
        do {
            chainPins = try chain.map { try SPKIHasher.pin(forDER: $0.der) }
        } catch {
            return reject(
                GatewayError(.certificateInvalid, "certificate public key cannot be read", upstream: host, cause: error),
                host: host, upstreamName: upstreamName)
        }
        if chainPins.contains(where: settings.pins.contains) {
            return .accept(validated)
        }

        let presentedText = chainPins.map(\.description).joined(separator: ", ")
        let metadata: Logger.Metadata = [
            "upstream.host": "\(host)",
            "upstream.name": "\(upstreamName ?? "-")",
            "tls.presented_pins": "\(presentedText)",
            "tls.configured_pins": "\(settings.pins.map(\.description).joined(separator: ", "))",
            "tls.pin_mode": "\(settings.pinMode.rawValue)",
        ]
        events.pinFailure(host: host, upstream: upstreamName, mode: settings.pinMode)
        switch settings.pinMode {
        case .enforce:
            logger.error(
                "TLS pin mismatch for \(host): refusing the connection; presented pins: \(presentedText)",
                metadata: metadata)
            return .reject(
                GatewayError(
                    .pinMismatch,
                    "the certificate chain of \(host) matches none of the configured pins",
                    upstream: host,
                    causeDescription: "presented pins: \(presentedText)"
                ))
        case .report:
            logger.warning(
                "TLS pin mismatch for \(host) (pin_mode: report, connection allowed); presented pins: \(presentedText)",
                metadata: metadata)
            return .accept(validated)
        }
    }

    private func reject(_ error: GatewayError, host: String, upstreamName: String?) -> Decision {
        logger.warning(
            "TLS verification failed for \(host): \(error.message)",
            metadata: [
                "upstream.host": "\(host)",
                "upstream.name": "\(upstreamName ?? "-")",
                "error.code": "\(error.code.rawValue)",
                "error.cause": "\(error.cause ?? "-")",
            ])
        return .reject(error)
    }

    private func warnInsecureOnce(host: String) {
        let first = insecureHostsWarned.withLockedValue { $0.insert(host).inserted }
        if first {
            logger.warning("TLS verification disabled for \(host) (insecure_skip_verify)")
        }
    }
}
