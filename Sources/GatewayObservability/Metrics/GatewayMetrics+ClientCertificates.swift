public import Foundation
import NIOConcurrencyHelpers
import Prometheus

extension GatewayMetrics {
    /// Sets `gateway_upstream_client_certificate_expiry_seconds{upstream}` for
    /// each upstream with `tls.client_certificate` (name → notAfter), at start
    /// and at each reload; the series of upstreams no longer presenting one go away.
    public func setClientCertificateExpiries(_ expiries: [String: Date]) {
        let gone = clientCertificateUpstreams.withLockedValue { known in
            let gone = known.subtracting(expiries.keys)
            known = Set(expiries.keys)
            return gone
        }
        for name in gone {
            registry.unregisterGauge(factory.gauge(.clientCertificateExpiry, [name]))
        }
        for (name, expiry) in expiries {
            factory.gauge(.clientCertificateExpiry, [name]).set(expiry.timeIntervalSince1970.rounded())
        }
    }
}
