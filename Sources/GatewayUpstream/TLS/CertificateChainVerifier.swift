import Foundation
import GatewayConfig
import GatewayCore
import SwiftASN1
public import X509

/// Chain and hostname verification with swift-certificates, no sockets: RFC 5280
/// path building and validity from the leaf to a trusted root, then RFC 6125
/// server identity (DNS names, or IP addresses for an IP literal).
public enum CertificateChainVerifier {
    public enum Result: Sendable {
        /// Leaf first, the trusted root last (taken from the trust store, even if the server never sent it).
        case valid([Certificate])
        /// A short reason fit for a client ("certificate has expired", "hostname mismatch", "unknown CA")
        /// and a detail (names, dates) for logs.
        case invalid(reason: String, detail: String?)

        public var isValid: Bool {
            if case .valid = self { return true }
            return false
        }
    }

    /// Verifies `presented` (leaf first, as the server sent it) for `serverHostname` against `roots`.
    public static func verify(
        presented: [Certificate],
        serverHostname: String,
        roots: CertificateStore
    ) async -> Result {
        let now = Date()
        guard let leaf = presented.first else {
            return .invalid(reason: "server presented no certificate", detail: nil)
        }
        let host = HostLiteral.bare(serverHostname)
        let isIP = HostLiteral.isIPAddress(host)
        var verifier = Verifier(rootCertificates: roots) {
            RFC5280Policy()
            ServerIdentityPolicy(serverHostname: isIP ? nil : host, serverIP: isIP ? host : nil)
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(presented.dropFirst()))
        switch result {
        case .validCertificate(let chain):
            return .valid(Array(chain))
        case .couldNotValidate(let failures):
            return describe(failures: failures, leaf: leaf, host: host, now: now)
        }
    }

    static func describe(
        failures: [CertificateValidationResult.PolicyFailure],
        leaf: Certificate,
        host: String,
        now: Date
    ) -> Result {
        guard !failures.isEmpty else {
            return .invalid(
                reason: "unknown CA: the certificate chain does not lead to a trusted root",
                detail: "leaf \(leaf.subject) issued by \(leaf.issuer)"
            )
        }
        let reasons = failures.map { $0.policyFailureReason.description }
        if reasons.contains(where: { $0.contains("has expired") }) {
            let expired = failures.flatMap { $0.chain }.first { $0.notValidAfter < now }
            return .invalid(
                reason: "certificate has expired",
                detail: expired.map { "\($0.subject) expired at \(ISO8601DateFormatter().string(from: $0.notValidAfter))" }
            )
        }
        if reasons.contains(where: { $0.contains("is not yet valid") }) {
            let early = failures.flatMap { $0.chain }.first { $0.notValidBefore > now }
            return .invalid(
                reason: "certificate is not yet valid",
                detail: early.map { "\($0.subject) valid from \(ISO8601DateFormatter().string(from: $0.notValidBefore))" }
            )
        }
        if reasons.contains(where: { $0.contains("SAN") || $0.contains("ommon name") }) {
            return .invalid(
                reason: "hostname mismatch: the certificate is not valid for \(host)",
                detail: "certificate names: \(names(of: leaf))"
            )
        }
        if reasons.contains(where: { $0.contains("Self-signed cert") && $0.contains("not marked as a CA") }) {
            return .invalid(
                reason: "self-signed certificate is trusted directly but is not marked as a CA (basicConstraints cA)",
                detail: "\(leaf.subject)"
            )
        }
        let first = reasons[0]
        return .invalid(
            reason: "certificate chain rejected",
            detail: first.count > 300 ? String(first.prefix(300)) + "..." : first
        )
    }

    /// The DNS names and IP addresses a certificate is valid for, for messages.
    static func names(of certificate: Certificate) -> String {
        guard let sans = try? certificate.extensions.subjectAlternativeNames else {
            return "(no subjectAltName) CN \(certificate.subject)"
        }
        let names = sans.compactMap { name -> String? in
            switch name {
            case .dnsName(let dns): return dns
            case .ipAddress(let bytes): return HostLiteral.format(ipBytes: Array(bytes.bytes))
            default: return nil
            }
        }
        return names.isEmpty ? "(none)" : names.joined(separator: ", ")
    }
}

/// Host names as they reach the TLS layer: `api.example.com`, `127.0.0.1`, `::1` or `[::1]`.
enum HostLiteral {
    /// Without the brackets of an IPv6 literal.
    static func bare(_ host: String) -> String {
        if host.hasPrefix("["), host.hasSuffix("]") {
            return String(host.dropFirst().dropLast())
        }
        return host
    }

    static func isIPAddress(_ host: String) -> Bool {
        IPAddressText.bytes(bare(host)) != nil
    }

    static func format(ipBytes: [UInt8]) -> String {
        if ipBytes.count == 4 {
            return ipBytes.map(String.init).joined(separator: ".")
        }
        if ipBytes.count == 16 {
            var address = in6_addr()
            withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: ipBytes) }
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            if inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil {
                return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
        return ipBytes.map { String(format: "%02x", $0) }.joined()
    }
}
