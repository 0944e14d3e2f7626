import GatewayCore

extension UpstreamTLSSettings {
    /// The `tls` section as an upstream's, or the tracing exporter's (which has
    /// no `pin_mode`: a pin that fails there always refuses), writes it.
    func write(to out: inout YAMLLines, withPinMode: Bool) {
        out.list("pins", pins.map(\.description))
        if withPinMode { out.plain("pin_mode", pinMode.rawValue) }
        if let caFile { out.scalar("ca_file", caFile) }
        out.plain("insecure_skip_verify", String(insecureSkipVerify))
        if let clientCertificate {
            out.key("client_certificate")
            out.indented { out in
                out.scalar("certificate_file", clientCertificate.certificateFile)
                out.scalar("key_file", clientCertificate.keyFile)
            }
        }
    }
}
