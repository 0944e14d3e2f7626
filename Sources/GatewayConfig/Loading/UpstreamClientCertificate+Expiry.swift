public import Foundation
public import GatewayCore

/// What `check-config` and the start and reload logs say about a client certificate's expiry.
extension UpstreamClientCertificate {
    /// `CN=client expires 2027-01-05T10:00:00Z (in 40 days)`.
    public func summary(now: Date = Date()) -> String {
        "\(subject) expires \(Self.timestamp(notValidAfter)) (\(Self.relative(secondsLeft(now: now))))"
    }

    /// A warning when it expired or expires within ``expiryWarningWindow`` (14 days); nil otherwise.
    public func expiryNote(now: Date = Date()) -> String? {
        let left = secondsLeft(now: now)
        guard left < Self.expiryWarningWindow else { return nil }
        let when = left <= 0 ? "expired" : "expires within 14 days:"
        return "the client certificate \(subject) \(when) \(Self.timestamp(notValidAfter)) (\(Self.relative(left))); upstreams that ask for it will refuse it once expired"
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    static func relative(_ seconds: TimeInterval) -> String {
        let days = Int((abs(seconds) / 86400).rounded(.down))
        let text = days >= 1 ? "\(days) day\(days == 1 ? "" : "s")" : "\(Int(abs(seconds) / 3600)) hours"
        return seconds < 0 ? "\(text) ago" : "in \(text)"
    }
}

extension GatewayConfig {
    /// The notAfter of each upstream's client certificate, by upstream name.
    public var clientCertificateExpiries: [String: Date] {
        var expiries: [String: Date] = [:]
        for upstream in upstreams {
            if let client = upstream.tls.clientCertificate { expiries[upstream.name] = client.notValidAfter }
        }
        return expiries
    }
}
