import GatewayCore
import NIOCore
import NIOPosix

/// Maps socket-level connect errors to gateway errors with a cause.
enum ConnectErrorMapping {
    static func gatewayError(for error: any Error, host: String, port: Int) -> GatewayError {
        let upstream = "\(host):\(port)"
        if let error = error as? GatewayError { return error }
        if error is ChannelError, case .connectTimeout = error as! ChannelError {
            return GatewayError(.connectTimeout, "timed out connecting to \(upstream)", upstream: upstream, cause: error)
        }
        if let error = error as? NIOConnectionError {
            if error.dnsAError != nil || error.dnsAAAAError != nil, error.connectionErrors.isEmpty {
                return GatewayError(.dnsFailure, "could not resolve \(host)", upstream: upstream, causeDescription: "DNS lookup failed")
            }
            let cause = error.connectionErrors.first.map { String(describing: $0.error) } ?? String(describing: error)
            return GatewayError(.connectFailed, "could not connect to \(upstream)", upstream: upstream, causeDescription: cause)
        }
        return GatewayError(.connectFailed, "could not connect to \(upstream)", upstream: upstream, cause: error)
    }
}
