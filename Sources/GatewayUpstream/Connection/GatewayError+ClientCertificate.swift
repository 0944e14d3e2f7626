import GatewayCore

extension GatewayError {
    /// BoringSSL's names of the alerts a server sends when it wants a client
    /// certificate and got none, or did not accept the one it got.
    static let clientCertificateAlerts = [
        "CERTIFICATE_REQUIRED", "BAD_CERTIFICATE", "UNKNOWN_CA", "CERTIFICATE_UNKNOWN", "CERTIFICATE_EXPIRED",
        "UNSUPPORTED_CERTIFICATE", "CERTIFICATE_REVOKED",
    ]

    /// A TLS error that is the server refusing the client's certificate (or its
    /// absence): `tls_handshake_failed` saying so, never retried. Over TLS 1.3 the
    /// server's verdict arrives after the client's side of the handshake is done,
    /// with the first read, so this is checked on exchange failures too. Nil for
    /// any other error (only read on a failure path).
    static func clientCertificateRefused(_ error: any Error, upstream: String) -> GatewayError? {
        let text = String(describing: error)
        guard text.contains("ALERT_"), let alert = clientCertificateAlerts.first(where: { text.contains("ALERT_\($0)") }) else {
            return nil
        }
        return GatewayError(
            .tlsHandshakeFailed,
            "the upstream refused the TLS handshake (alert \(alert.lowercased())): it asks for a client certificate it trusts; see the upstream's tls.client_certificate",
            upstream: upstream, cause: error)
    }
}
