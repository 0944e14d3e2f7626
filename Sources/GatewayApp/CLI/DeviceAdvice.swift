import GatewayConfig
import GatewayListener

/// What `gateway device` prints for a config and this machine's addresses
/// (a value, so tests check it without a network).
struct DeviceAdvice {
    let config: GatewayConfig
    let configPath: String
    let interfaces: [LANAddresses.Address]

    /// A device on the LAN can reach the proxy port as configured.
    var reachable: Bool { !config.listen.proxy.isLoopback && !addresses.isEmpty }

    /// Addresses a phone may use: every LAN address for a wildcard listener, else the configured host.
    var addresses: [String] {
        let proxy = config.listen.proxy
        if proxy.isLoopback { return [] }
        if proxy.isWildcard {
            let wantsV6 = proxy.host.contains(":")
            return interfaces.filter { !$0.isIPv6 || wantsV6 }.map(\.text)
        }
        return [proxy.host]
    }

    var text: String {
        let proxy = config.listen.proxy
        var lines: [String] = []
        if proxy.isLoopback {
            lines.append("The proxy listens on \(proxy) (loopback): a phone on your network cannot reach it.")
            lines.append("To let it, listen on the LAN with proxy authentication on, in \(configPath):")
            lines.append("")
            lines.append("    listen:")
            lines.append("      proxy: 0.0.0.0:\(proxy.port)")
            if config.proxyAuth == nil {
                lines.append("    proxy_auth:")
                lines.append("      users:")
                lines.append("        - username: phone")
                lines.append("          password_env: GATEWAY_PHONE_PASSWORD")
            }
            lines.append("")
            lines.append("then restart the gateway and run `gateway device` again.")
            lines.append("Without proxy_auth the gateway refuses a non-loopback listener (anyone on the network could use it).")
            return lines.joined(separator: "\n") + "\n"
        }
        if addresses.isEmpty {
            lines.append("The proxy listens on \(proxy), but this machine has no LAN address right now (no network up?).")
            return lines.joined(separator: "\n") + "\n"
        }
        lines.append("On the phone, Wi-Fi settings of the network this machine is on, HTTP proxy: Manual")
        for address in addresses {
            let shown = address.contains(":") ? "[\(address)]" : address
            lines.append("    server \(shown)   port \(proxy.port)")
        }
        if let auth = config.proxyAuth {
            let names = auth.users.map(\.username).joined(separator: ", ")
            lines.append("    authentication: on; user \(names) and its password (proxy_auth)")
        } else {
            lines.append("    authentication: OFF (open: true): anyone who can reach \(proxy) can use this proxy.")
            lines.append("    Prefer proxy_auth (users with password_env) before taking a phone onto a shared network.")
        }
        lines.append("")
        lines.append("Then open \(OnboardingSite.url) in the phone's browser (Safari on iOS): it serves the CA")
        lines.append("(a profile for iOS, a .crt for Android), the steps to trust it and its SHA-256 fingerprint,")
        lines.append("which `gateway ca export` prints here to compare.")
        if !config.upstreams.contains(where: \.intercept) {
            lines.append("No upstream has intercept: true yet: the phone needs no CA until one does.")
        }
        lines.append("A firewall on this machine must let the phone in on TCP port \(proxy.port).")
        return lines.joined(separator: "\n") + "\n"
    }
}
