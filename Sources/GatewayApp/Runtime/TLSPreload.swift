import GatewayConfig
import GatewayCore
import GatewayPolicies

/// Which trust stores the gateway loads at start, off the event loops, so the
/// first TLS connection to a configured upstream does not parse a PEM bundle.
///
/// Only settings a configured connection can use over TLS: an upstream with an
/// `https://` origin or with no origin (its requests keep their own scheme, so
/// `https://` absolute-form requests and intercepted tunnels use TLS), and an
/// OAuth2 token endpoint over `https://`. A config with none of these (the
/// default config, or only `http://` origins) parses nothing at start: parsing
/// the system bundle costs 2 to 4 MiB of resident memory that a plain HTTP
/// gateway never needs. A TLS connection to a host outside the config (an
/// `https://` absolute-form request) still works: its roots are parsed on
/// first use and kept, as after a reload that adds a `ca_file`.
enum TLSPreload {
    static func settings(for config: GatewayConfig) -> Set<UpstreamTLSSettings> {
        var settings = Set<UpstreamTLSSettings>()
        for upstream in config.upstreams {
            if upstream.origin.map({ $0.scheme == .https }) ?? true {
                settings.insert(upstream.tls)
            }
            if case .oauth2(let oauth2)? = upstream.auth?.kind,
                let route = TokenEndpointRoute(tokenURL: oauth2.tokenURL, config: config), route.scheme == .https
            {
                settings.insert(route.tls)
            }
        }
        return settings
    }
}
