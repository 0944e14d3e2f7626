public import NIOCore

extension GatewayError {
    /// 403 `host_not_allowed` when `reached` (the address a connection made
    /// for `host` got to) is one of the gateway's own listeners; else nil.
    public static func ownListener(_ reached: SocketAddress?, in listeners: OwnListeners, host: String, upstream: String) -> GatewayError? {
        guard let reached, let port = reached.port, let text = reached.ipAddress, let address = IPAddress(text),
            listeners.contains(address, port: port)
        else { return nil }
        return ownListener(host: host, upstream: upstream)
    }

    /// 403 `host_not_allowed` before connecting when `host`:`port` names one
    /// of the gateway's own listeners (an IP literal, `localhost`); else nil.
    public static func ownListener(named host: String, port: Int, in listeners: OwnListeners, upstream: String) -> GatewayError? {
        listeners.named(host: host, port: port) ? ownListener(host: host, upstream: upstream) : nil
    }

    private static func ownListener(host: String, upstream: String) -> GatewayError {
        GatewayError(
            .hostNotAllowed, "\(host) is this gateway's own listener: the proxy never connects to itself or to its admin",
            upstream: upstream
        )
    }
}
