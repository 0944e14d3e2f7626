public import Foundation
public import GatewayCore
import NIOConcurrencyHelpers
public import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import SwiftASN1
import X509

/// One certificate seen by ``PinInspector``.
public struct InspectedCertificate: Sendable, Hashable {
    public var subject: String
    public var issuer: String
    public var notValidBefore: Date
    public var notValidAfter: Date
    public var pin: SPKIPin
    /// False for the trust-store root the chain led to when the server did not send it.
    public var isFromServer: Bool
    /// Whether this certificate may issue others (BasicConstraints cA).
    public var isCertificateAuthority: Bool

    public init(
        subject: String, issuer: String, notValidBefore: Date, notValidAfter: Date, pin: SPKIPin,
        isFromServer: Bool, isCertificateAuthority: Bool = false
    ) {
        self.subject = subject
        self.issuer = issuer
        self.notValidBefore = notValidBefore
        self.notValidAfter = notValidAfter
        self.pin = pin
        self.isFromServer = isFromServer
        self.isCertificateAuthority = isCertificateAuthority
    }
}

/// What `gateway pins host:port` found.
public struct PinInspection: Sendable {
    public var host: String
    public var port: Int
    /// The chain as the server sent it (leaf first), then, when it verified and
    /// the server did not send it, the trust-store root it chained to.
    public var certificates: [InspectedCertificate]
    /// Whether chain and hostname verified against `caFile` or the system roots.
    public var verified: Bool
    public var verificationError: String?
    /// The `ca_file` used, nil for the system bundle.
    public var caFile: String?

    public init(
        host: String, port: Int, certificates: [InspectedCertificate], verified: Bool,
        verificationError: String?, caFile: String? = nil
    ) {
        self.host = host
        self.port = port
        self.certificates = certificates
        self.verified = verified
        self.verificationError = verificationError
        self.caFile = caFile
    }

    /// The pins the snippet suggests: the intermediate (the leaf if there is
    /// none), then as backup the next one up (the root), else the leaf.
    /// Intermediate pins survive leaf renewals; the backup survives a change of
    /// intermediate under the same root.
    public var suggestedPins: [SPKIPin] {
        guard let leaf = certificates.first else { return [] }
        let primaryIndex = certificates.count > 1 ? 1 : 0
        var pins = [certificates[primaryIndex].pin]
        if primaryIndex + 1 < certificates.count {
            pins.append(certificates[primaryIndex + 1].pin)
        } else if primaryIndex != 0 {
            pins.append(leaf.pin)
        }
        return pins
    }

    /// A report for people: each certificate with its pin, then a YAML snippet to paste.
    public func render(upstreamName: String?) -> String {
        let dateFormatter = ISO8601DateFormatter()
        let now = Date()
        var lines: [String] = []
        let roots = caFile.map { "ca_file \($0)" } ?? "the system roots"
        if verified {
            lines.append("\(host):\(port): chain verified against \(roots)")
        } else {
            lines.append(
                "\(host):\(port): chain NOT verified against \(roots): \(verificationError ?? "unknown reason")")
        }
        lines.append("")
        for (index, certificate) in certificates.enumerated() {
            var role = index == 0 ? "leaf" : (certificate.isCertificateAuthority ? "CA" : "certificate")
            if !certificate.isFromServer { role = "root from the trust store, not sent by the server" }
            lines.append("[\(index)] \(role)")
            lines.append("    subject: \(certificate.subject)")
            lines.append("    issuer:  \(certificate.issuer)")
            var expiry = "    expires: \(dateFormatter.string(from: certificate.notValidAfter))"
            if certificate.notValidAfter < now {
                expiry += " (EXPIRED)"
            } else {
                let days = Int(certificate.notValidAfter.timeIntervalSince(now) / 86400)
                expiry += " (in \(days) days)"
            }
            lines.append(expiry)
            lines.append("    pin:     \(certificate.pin)")
        }
        let pins = suggestedPins
        if !pins.isEmpty {
            let name = upstreamName ?? host
            lines.append("")
            let secondIndex = certificates.count > 2 ? 2 : 0
            let second = pins.count > 1 ? "; second, as backup: \(pinRole(at: secondIndex))" : ""
            lines.append("# Paste into the gateway config (first pin: \(pinRole(at: certificates.count > 1 ? 1 : 0))\(second)).")
            lines.append("upstreams:")
            lines.append("  - name: \(Self.yamlScalar(name))")
            lines.append("    hosts: [\(Self.yamlScalar(host))]")
            lines.append("    tls:")
            lines.append("      pins: [\(pins.map(\.description).joined(separator: ", "))]")
            lines.append("      pin_mode: enforce")
            if let caFile {
                // Absolute: the config resolves a relative ca_file against its own directory, not this one.
                let absolute = caFile.hasPrefix("/") ? caFile : FileManager.default.currentDirectoryPath + "/" + caFile
                lines.append("      ca_file: \(Self.yamlScalar(absolute))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// What the certificate at `index` is, for the snippet's comment.
    func pinRole(at index: Int) -> String {
        guard index > 0, index < certificates.count else { return "leaf" }
        let certificate = certificates[index]
        let isRoot = !certificate.isFromServer || certificate.subject == certificate.issuer
        return isRoot ? "root" : "intermediate"
    }

    /// Quotes a scalar when plain YAML would misread it.
    static func yamlScalar(_ text: String) -> String {
        let plain = text.allSatisfy { $0.isLetter || $0.isNumber || "-._/".contains($0) }
        if plain, !text.isEmpty, text.first != "-" { return text }
        return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

/// Connects to an upstream with TLS (SNI unless an IP literal) and reports the
/// chain it presents with the pin of every certificate. Never fails on an
/// untrusted chain: it is a diagnostic; it says whether the chain verified.
public enum PinInspector {
    public static func inspect(
        host: String,
        port: Int,
        caFile: String? = nil,
        timeout: Duration = .seconds(10),
        eventLoopGroup: any EventLoopGroup
    ) async throws -> PinInspection {
        let bareHost = HostLiteral.bare(host)
        let sni: String? = HostLiteral.isIPAddress(bareHost) ? nil : bareHost
        let roots: CertificateStore?
        let rootsError: String?
        do {
            roots = try TrustRootCache.shared.store(caFile: caFile)
            rootsError = nil
        } catch let error as GatewayError {
            roots = nil
            rootsError = error.message
        }

        let captured = NIOLockedValueBox<[NIOSSLCertificate]?>(nil)
        let handshakeBox = NIOLockedValueBox<EventLoopFuture<Void>?>(nil)
        let context = try NIOSSLContext(configuration: PinningTLSHandlerFactory.clientConfiguration())
        let timeAmount = TimeAmount.nanoseconds(
            Int64(timeout.components.seconds) * 1_000_000_000 + Int64(timeout.components.attoseconds / 1_000_000_000))

        let bootstrap = ClientBootstrap(group: eventLoopGroup)
            .connectTimeout(timeAmount)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = try NIOSSLClientHandler(
                        context: context,
                        serverHostname: sni,
                        customVerificationCallbackWithMetadata: { @Sendable presented, promise in
                            // Accept whatever is presented: verification happens below, for the report.
                            captured.withLockedValue { $0 = presented }
                            promise.succeed(.certificateVerified(VerificationMetadata(nil)))
                        }
                    )
                    let handshake = channel.eventLoop.makePromise(of: Void.self)
                    let waiter = TLSHandshakeObserver(promise: handshake)
                    handshakeBox.withLockedValue { $0 = handshake.futureResult }
                    try channel.pipeline.syncOperations.addHandler(handler)
                    try channel.pipeline.syncOperations.addHandler(waiter)
                }
            }

        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: bareHost, port: port).get()
        } catch {
            throw GatewayError(.connectFailed, "cannot connect to \(host):\(port)", upstream: host, cause: error)
        }
        let handshake = handshakeBox.withLockedValue { $0 }!
        let timeoutTask = channel.eventLoop.scheduleTask(in: timeAmount) {
            channel.pipeline.fireErrorCaught(InspectionTimeout())
        }
        let handshakeError: (any Error)?
        do {
            try await handshake.get()
            handshakeError = nil
        } catch {
            handshakeError = error
        }
        timeoutTask.cancel()
        try? await channel.close()

        guard let presented = captured.withLockedValue({ $0 }), !presented.isEmpty else {
            throw GatewayError(
                .tlsHandshakeFailed,
                "TLS handshake with \(host):\(port) failed before the server presented a certificate",
                upstream: host,
                cause: handshakeError
            )
        }

        let parsed: [(certificate: Certificate, der: [UInt8])]
        do {
            parsed = try presented.map { certificate in
                let der = try certificate.toDERBytes()
                return (try Certificate(derEncoded: der), der)
            }
        } catch {
            throw GatewayError(.certificateInvalid, "\(host) presented a certificate that cannot be parsed", cause: error)
        }

        var inspected = try parsed.map { try inspect($0.certificate, der: $0.der, fromServer: true) }
        var verified = false
        var verificationError = rootsError
        if let roots {
            switch await CertificateChainVerifier.verify(
                presented: parsed.map(\.certificate), serverHostname: bareHost, roots: roots)
            {
            case .valid(let chain):
                verified = true
                verificationError = nil
                let presentedCertificates = parsed.map(\.certificate)
                for certificate in chain where !presentedCertificates.contains(certificate) {
                    var serializer = DER.Serializer()
                    try serializer.serialize(certificate)
                    inspected.append(try inspect(certificate, der: serializer.serializedBytes, fromServer: false))
                }
            case .invalid(let reason, let detail):
                verificationError = detail.map { "\(reason) (\($0))" } ?? reason
            }
        }
        return PinInspection(
            host: host, port: port, certificates: inspected, verified: verified,
            verificationError: verificationError, caFile: caFile)
    }

    private static func inspect(_ certificate: Certificate, der: [UInt8], fromServer: Bool) throws -> InspectedCertificate {
        let isCA = (try? certificate.extensions.basicConstraints).map { constraints -> Bool in
            if case .isCertificateAuthority = constraints { return true }
            return false
        } ?? false
        return InspectedCertificate(
            subject: certificate.subject.description,
            issuer: certificate.issuer.description,
            notValidBefore: certificate.notValidBefore,
            notValidAfter: certificate.notValidAfter,
            pin: try SPKIHasher.pin(forDER: der),
            isFromServer: fromServer,
            isCertificateAuthority: isCA
        )
    }

    struct InspectionTimeout: Error, CustomStringConvertible {
        var description: String { "timed out waiting for the TLS handshake" }
    }
}
