/// How the gateway verifies an upstream's TLS certificate. Part of the upstream
/// pool key: connections made under different settings are never shared.
public struct UpstreamTLSSettings: Sendable, Hashable {
    /// SPKI SHA-256 pins; empty means no pinning (chain and hostname are still verified).
    public var pins: [SPKIPin]
    public var pinMode: PinMode
    /// PEM bundle of trusted roots; nil means the system bundle.
    public var caFile: String?
    /// Skips chain and hostname verification (test backends only; logged loudly).
    /// Pins, if any, are still checked against the presented chain.
    public var insecureSkipVerify: Bool
    /// `client_certificate`: presented when the upstream asks for one (mutual TLS); nil = none.
    public var clientCertificate: UpstreamClientCertificate?

    public init(
        pins: [SPKIPin] = [], pinMode: PinMode = .enforce, caFile: String? = nil, insecureSkipVerify: Bool = false,
        clientCertificate: UpstreamClientCertificate? = nil
    ) {
        self.pins = pins
        self.pinMode = pinMode
        self.caFile = caFile
        self.insecureSkipVerify = insecureSkipVerify
        self.clientCertificate = clientCertificate
    }

    /// Verify the chain and hostname against the system roots, no pins.
    public static let standard = UpstreamTLSSettings()
}
