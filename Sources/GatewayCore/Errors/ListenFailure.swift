#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
public import NIOCore

/// A listener could not bind its address: says which listener, which address,
/// and what to do, instead of the socket call's own text.
public struct ListenFailure: Error, CustomStringConvertible {
    /// `proxy` or `admin`.
    public let listener: String
    /// `host:port` as configured.
    public let address: String
    public let cause: any Error

    public init(listener: String, address: String, cause: any Error) {
        self.listener = listener
        self.address = address
        self.cause = cause
    }

    public var description: String {
        let key = "listen.\(listener)"
        let reason: String
        switch (cause as? IOError)?.errnoCode {
        case EADDRINUSE:
            reason = "the address is already in use (another process, or another listener of this config, holds it): stop it or change \(key)"
        case EACCES:
            reason = "permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE): use a higher port in \(key)"
        case EADDRNOTAVAIL:
            reason = "no network interface of this machine has that address: change \(key) (0.0.0.0 listens on all)"
        default:
            reason = "\(cause)"
        }
        return "cannot listen for the \(listener) on \(address): \(reason)"
    }
}

extension SocketAddress {
    /// `127.0.0.1:8080` or `[::1]:8080` (NIO's description reads `[IPv4]127.0.0.1/127.0.0.1:8080`).
    public var displayText: String {
        guard let ip = ipAddress else { return description }
        let host = ip.contains(":") ? "[\(ip)]" : ip
        return port.map { "\(host):\($0)" } ?? host
    }
}
