import NIOConcurrencyHelpers

/// The proxy URL of the through-gateway curl line (`curl -x URL`): the address
/// the listener actually bound (port 0 resolved), set once it is bound. A
/// wildcard bind (`0.0.0.0`, `::`) is written as `127.0.0.1`.
public final class TraceProxyAddress: Sendable {
    private let box = NIOLockedValueBox<String?>(nil)

    public init() {}

    /// Records the bound address.
    public func set(host: String, port: Int) {
        let url = Self.url(host: host, port: port)
        box.withLockedValue { $0 = url }
    }

    /// The bound proxy URL; nil until the listener is bound.
    public var url: String? { box.withLockedValue { $0 } }

    /// `http://host:port`, a wildcard host as `127.0.0.1`, IPv6 in brackets.
    public static func url(host: String, port: Int) -> String {
        let host = host == "0.0.0.0" || host == "::" || host.isEmpty ? "127.0.0.1" : host
        return "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }
}
