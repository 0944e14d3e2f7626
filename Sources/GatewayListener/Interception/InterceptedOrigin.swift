/// The host and port of an intercepted `CONNECT`: where every request read
/// inside the tunnel goes (over TLS), whatever its `Host` header says.
struct InterceptedOrigin: Sendable, Equatable {
    let host: String
    let port: Int

    /// A request target read inside the tunnel, as a target of the origin.
    func resolve(_ target: ClientTarget) -> ClientTarget {
        switch target {
        case .origin(let path):
            return .absolute(scheme: .https, host: host, port: port, target: path)
        case .absolute(_, _, _, let path):
            // Absolute form inside a tunnel: the tunnel decides where it goes.
            return .absolute(scheme: .https, host: host, port: port, target: path)
        case .authority:
            return target
        }
    }
}
