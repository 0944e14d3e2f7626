import Foundation
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
/// Costs per new connection: no context is built (one `NIOSSLContext` per ALPN
/// offer serves all settings, because BoringSSL's own trust store is never
/// consulted), no bundle
/// is parsed (``TrustRootCache`` parses each PEM file once, again only when the
/// file changes), and a chain that verified before for the same host and trust
/// store (same bytes) is answered on the event loop without path building or
/// signature checks (remembered for 10 minutes at most, never past its expiry).
/// A first-seen chain is parsed and verified in a `Task`, since swift-certificates'
/// `Verifier` is async.
public final class PinningTLSHandlerFactory: UpstreamTLSHandlerFactory {
    private let events: any GatewayEvents
    private let logger: Logger
    private let trustRoots: TrustRootCache
    /// One client context per ALPN offer and client certificate, built on first use (see `+Contexts.swift`).
    let contexts = NIOLockedValueBox<[ContextKey: NIOSSLContext]>([:])
    private let insecureHostsWarned = NIOLockedValueBox<Set<String>>([])

    public convenience init(events: any GatewayEvents = NoGatewayEvents(), logger: Logger) {
        self.init(events: events, logger: logger, trustRoots: .shared)
    }

    public init(events: any GatewayEvents = NoGatewayEvents(), logger: Logger, trustRoots: TrustRootCache) {
        self.events = events
        self.logger = logger
        self.trustRoots = trustRoots
    }

    /// Loads (and caches) the trust roots `settings` need, so the first connection
    /// does not pay for parsing the bundle (nor for building the contexts of
    /// `http_version: auto` and of HTTP/1.1 connections). Throws when the `ca_file` is unusable.
    public func prepare(_ settings: UpstreamTLSSettings) throws {
        _ = try sslContext(alpn: .http1, client: settings.clientCertificate)
        _ = try sslContext(alpn: .http2AndHTTP1, client: settings.clientCertificate)
        if !settings.insecureSkipVerify {
            _ = try trustRoots.store(caFile: settings.caFile)
        }
    }

    public func makeClientHandler(
        serverHostname: String,
        settings: UpstreamTLSSettings,
        upstreamName: String?
    ) throws -> (handler: NIOSSLClientHandler, report: TLSVerificationReport) {
        try makeClientHandler(serverHostname: serverHostname, settings: settings, upstreamName: upstreamName, alpn: .http1)
    }

    /// A handler offering `alpn`; verification (chain, hostname, pins) is the same whatever it offers.
    public func makeClientHandler(
        serverHostname: String,
        settings: UpstreamTLSSettings,
        upstreamName: String?,
        alpn: UpstreamALPNOffer
    ) throws -> (handler: NIOSSLClientHandler, report: TLSVerificationReport) {
        let report = TLSVerificationReport()
        let host = HostLiteral.bare(serverHostname)
        let sni: String? = HostLiteral.isIPAddress(host) ? nil : host

        // Resolve the roots now: a missing ca_file fails the connection attempt
        // with a clear error instead of a handshake failure.
        let roots: TrustRootCache.Roots?
        if settings.insecureSkipVerify {
            roots = nil
            warnInsecureOnce(host: host)
        } else {
            roots = try trustRoots.roots(caFile: settings.caFile)
        }

        let callback: @Sendable ([NIOSSLCertificate], EventLoopPromise<NIOSSLVerificationResultWithMetadata>) -> Void =
            { [self] presented, promise in
                @Sendable func complete(_ decision: Decision) {
                    switch decision {
                    case .accept(let validated):
                        promise.succeed(.certificateVerified(VerificationMetadata(validated)))
                    case .reject(let error):
                        report.failure = error
                        promise.succeed(.failed)
                    }
                }
                // Skipped verification, or a chain verified before: answer on the event loop.
                if let decision = self.evaluateWithoutChainBuilding(
                    presented: presented, host: host, settings: settings, roots: roots, upstreamName: upstreamName)
                {
                    complete(decision)
                    return
                }
                // swift-certificates' Verifier is async: build and check the chain off the event loop.
                Task {
                    complete(
                        await self.evaluate(
                            presented: presented, host: host, settings: settings, roots: roots,
                            upstreamName: upstreamName))
                }
            }
        let handler = try NIOSSLClientHandler(
            context: sslContext(alpn: alpn, client: settings.clientCertificate),
            serverHostname: sni,
            customVerificationCallbackWithMetadata: callback
        )
        return (handler, report)
    }

    enum Decision: Sendable {
        /// The validated chain for NIOSSL's metadata (nil when verification was skipped).
        case accept(NIOSSL.ValidatedCertificateChain?)
        case reject(GatewayError)
    }

    /// Verification as the callback runs it, without a socket. Returns the validated
    /// chain (leaf to trust-store root), nil when verification is skipped.
    public func verify(
        presented: [NIOSSLCertificate],
        serverHostname: String,
        settings: UpstreamTLSSettings,
        upstreamName: String? = nil
    ) async throws -> [NIOSSLCertificate]? {
        let host = HostLiteral.bare(serverHostname)
        let roots = settings.insecureSkipVerify ? nil : try trustRoots.roots(caFile: settings.caFile)
        switch await evaluate(
            presented: presented, host: host, settings: settings, roots: roots, upstreamName: upstreamName)
        {
        case .accept(let chain): return chain.map { Array($0) as [NIOSSLCertificate] }
        case .reject(let error): throw error
        }
    }

    // MARK: - Verified chains, remembered

    /// A chain that verified: the next connection presenting the same bytes for
    /// the same host and trust store skips path building and signature checks.
    /// (The handshake itself still proves the server holds the leaf's key: BoringSSL
    /// checks CertificateVerify whatever this callback answers.)
    struct VerifiedChain: Sendable {
        var validated: NIOSSL.ValidatedCertificateChain
        /// Pins of every certificate of the chain, leaf to root.
        var pins: [SPKIPin]
        /// The earliest notValidAfter of the chain, capped to 10 minutes from verification.
        var reverifyAfter: Date
    }

    struct ChainKey: Hashable, Sendable {
        var host: String
        var rootsGeneration: UInt64
        var presentedDER: [[UInt8]]
    }

    static let verifiedChainLimit = 1024
    static let verifiedChainLifetime: TimeInterval = 600

    private let verifiedChains = NIOLockedValueBox<[ChainKey: VerifiedChain]>([:])

    private func remember(_ chain: VerifiedChain, for key: ChainKey) {
        verifiedChains.withLockedValue { chains in
            if chains.count >= Self.verifiedChainLimit {
                let now = Date()
                chains = chains.filter { $0.value.reverifyAfter > now }
                if chains.count >= Self.verifiedChainLimit { chains.removeAll(keepingCapacity: true) }
            }
            chains[key] = chain
        }
    }

    /// The decision when it needs no chain building: verification skipped
    /// (`insecure_skip_verify`) or a chain verified before. Nil otherwise.
    func evaluateWithoutChainBuilding(
        presented: [NIOSSLCertificate],
        host: String,
        settings: UpstreamTLSSettings,
        roots: TrustRootCache.Roots?,
        upstreamName: String?
    ) -> Decision? {
        guard let roots else {
            if settings.pins.isEmpty { return .accept(nil) }
            do {
                let pins = try presented.map { try SPKIHasher.pin(forDER: $0.toDERBytes()) }
                return checkPins(pins, validated: nil, host: host, settings: settings, upstreamName: upstreamName)
            } catch {
                return reject(
                    GatewayError(.certificateInvalid, "server certificate cannot be parsed", upstream: host, cause: error),
                    host: host, upstreamName: upstreamName)
            }
        }
        guard let presentedDER = try? presented.map({ try $0.toDERBytes() }) else { return nil }
        let key = ChainKey(host: host, rootsGeneration: roots.generation, presentedDER: presentedDER)
        guard let known = verifiedChains.withLockedValue({ $0[key] }), known.reverifyAfter > Date() else {
            return nil
        }
        return checkPins(known.pins, validated: known.validated, host: host, settings: settings, upstreamName: upstreamName)
    }

    /// The full verification: chain and hostname, then pins.
    func evaluate(
        presented: [NIOSSLCertificate],
        host: String,
        settings: UpstreamTLSSettings,
        roots: TrustRootCache.Roots?,
        upstreamName: String?
    ) async -> Decision {
        guard let roots else {
            return evaluateWithoutChainBuilding(
                presented: presented, host: host, settings: settings, roots: nil, upstreamName: upstreamName)!
        }
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

        // 1. Chain and hostname.
        let verified: VerifiedChain
        switch await CertificateChainVerifier.verify(presented: parsed, serverHostname: host, roots: roots.store) {
        case .valid(let certificates):
            do {
                var pins: [SPKIPin] = []
                var nio: [NIOSSLCertificate] = []
                for certificate in certificates {
                    let der: [UInt8]
                    if let index = parsed.firstIndex(of: certificate) {
                        der = presentedDER[index]
                        nio.append(presented[index])
                    } else {
                        // From the trust store: the server did not send it.
                        var serializer = DER.Serializer()
                        try serializer.serialize(certificate)
                        der = serializer.serializedBytes
                        nio.append(try NIOSSLCertificate(bytes: der, format: .der))
                    }
                    pins.append(try SPKIHasher.pin(forDER: der))
                }
                let expiry = certificates.map(\.notValidAfter).min() ?? Date()
                verified = VerifiedChain(
                    validated: NIOSSL.ValidatedCertificateChain(nio),
                    pins: pins,
                    reverifyAfter: min(expiry, Date().addingTimeInterval(Self.verifiedChainLifetime))
                )
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
        remember(verified, for: ChainKey(host: host, rootsGeneration: roots.generation, presentedDER: presentedDER))

        // 2. Pins, against every certificate of the validated chain.
        return checkPins(verified.pins, validated: verified.validated, host: host, settings: settings, upstreamName: upstreamName)
    }

    private func checkPins(
        _ chainPins: [SPKIPin],
        validated: NIOSSL.ValidatedCertificateChain?,
        host: String,
        settings: UpstreamTLSSettings,
        upstreamName: String?
    ) -> Decision {
        if settings.pins.isEmpty || chainPins.contains(where: settings.pins.contains) {
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
