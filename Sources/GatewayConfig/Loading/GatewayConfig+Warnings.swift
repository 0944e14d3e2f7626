/// Non-fatal notes about a valid config, each `<key path>: <note>`: settings
/// that work but weaken security. `gateway run` and `check-config` should
/// print them; none contains a secret value.
extension GatewayConfig {
    public var warnings: [String] {
        var notes: [String] = []
        if !trace.redact {
            notes.append(
                "trace.redact: false: secrets (Authorization headers, tokens, passwords) are written to the trace file and stderr in clear text; use this for local debugging only"
            )
        }
        if !listen.admin.isLoopback {
            notes.append(
                "listen.admin: \(listen.admin.host) is not a loopback address: /metrics, /stats and the admin pages are reachable from the network without authentication"
            )
        }
        for (index, upstream) in upstreams.enumerated() {
            let prefix = "upstreams[\(index)]"
            if upstream.tls.insecureSkipVerify {
                notes.append("\(prefix).tls.insecure_skip_verify: the upstream's certificate chain and host name are not verified")
            }
            if let client = upstream.tls.clientCertificate, let note = client.expiryNote() {
                notes.append("\(prefix).tls.client_certificate: \(note)")
            }
            guard let auth = upstream.auth else { continue }
            if upstream.hosts.contains(where: { $0.description == "*" }) {
                notes.append("\(prefix).hosts: * with auth sends this credential to every host clients name (within its scope); list the hosts it belongs to")
            }
            if case .query = auth.kind {
                notes.append("\(prefix).auth: type query puts a secret in the URL, where it may leak into logs of other systems")
            }
            if case .oauth2(let oauth) = auth.kind, let endpoint = oauth.tokenEndpoint,
                endpoint.origin.scheme == .http, !BindAddress(host: endpoint.origin.host, port: 0).isLoopback
            {
                notes.append("\(prefix).auth.token_url: plain http sends client credentials and tokens unencrypted")
            }
            for (key, secret) in auth.secrets where secret.source == .inline && key != "client_id" {
                notes.append(
                    "\(prefix).auth.\(key): secret written inline in the config file; prefer \(key)_env or \(key)_file")
            }
        }
        notes += tracingWarnings
        return notes
    }
}
