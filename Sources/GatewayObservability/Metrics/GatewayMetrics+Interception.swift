extension GatewayMetrics {
    /// `gateway_interception_certificates_total{upstream,result}`; result `minted` or `cached`.
    public func interceptionLeaf(upstream: String, cached: Bool) {
        interceptionCertificates.get([upstreamLabel(upstream), cached ? "cached" : "minted"]).increment()
    }

    /// `gateway_interception_handshake_failures_total{upstream,reason}`; reason from a fixed set.
    public func interceptionHandshakeFailure(upstream: String, reason: String) {
        interceptionHandshakeFailures.get([upstreamLabel(upstream), reason]).increment()
    }
}
