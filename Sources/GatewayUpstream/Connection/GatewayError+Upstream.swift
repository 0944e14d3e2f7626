import GatewayCore
import NIOCore
import NIOPosix
import NIOSSL

extension GatewayError {
    /// Maps a failure to open a connection (DNS, TCP connect, connect timeout) to a gateway error.
    static func connectFailure(_ error: any Error, upstream: String) -> any Error {
        if error is CancellationError { return error }
        if var gatewayError = error as? GatewayError {
            if gatewayError.upstream == nil { gatewayError.upstream = upstream }
            return gatewayError
        }
        if case ChannelError.connectTimeout = error {
            return GatewayError(.connectTimeout, "connecting to the upstream timed out", upstream: upstream)
        }
        if let connectionError = error as? NIOConnectionError {
            if let first = connectionError.connectionErrors.first {
                if connectionError.connectionErrors.contains(where: { if case ChannelError.connectTimeout = $0.error { true } else { false } }) {
                    return GatewayError(.connectTimeout, "connecting to the upstream timed out", upstream: upstream)
                }
                return GatewayError(.connectFailed, "could not connect to the upstream", upstream: upstream, cause: first.error)
            }
            let dnsError = connectionError.dnsAError ?? connectionError.dnsAAAAError
            return GatewayError(
                .dnsFailure, "could not resolve the upstream host", upstream: upstream,
                causeDescription: dnsError.map { String(describing: $0) } ?? "no address found"
            )
        }
        if error is SocketAddressError.UnknownHost || error is SocketAddressError {
            return GatewayError(.dnsFailure, "could not resolve the upstream host", upstream: upstream, cause: error)
        }
        return GatewayError(.connectFailed, "could not connect to the upstream", upstream: upstream, cause: error)
    }

    /// Maps a failed TLS handshake: the verifier's own verdict (pin mismatch, invalid
    /// certificate) when it gave one, else a generic handshake failure.
    static func tlsFailure(_ error: any Error, report: TLSVerificationReport, upstream: String) -> GatewayError {
        if var failure = report.failure {
            failure.upstream = upstream  // host:port, as in every gateway error (the verifier knows only the host)
            return failure
        }
        if var gatewayError = error as? GatewayError {
            if gatewayError.upstream == nil { gatewayError.upstream = upstream }
            return gatewayError
        }
        if let refused = clientCertificateRefused(error, upstream: upstream) { return refused }
        return GatewayError(.tlsHandshakeFailed, "the TLS handshake with the upstream failed", upstream: upstream, cause: error)
    }

    /// Maps an error during an attempt on an established connection (a failed
    /// write, TLS, the socket). Malformed responses are the framer's, mapped apart.
    static func attemptFailure(_ error: any Error, upstream: String) -> any Error {
        if error is CancellationError { return error }
        if var gatewayError = error as? GatewayError {
            if gatewayError.upstream == nil { gatewayError.upstream = upstream }
            return gatewayError
        }
        if let refused = clientCertificateRefused(error, upstream: upstream) { return refused }
        return GatewayError(.connectionReset, "the connection to the upstream failed", upstream: upstream, cause: error)
    }

    static func upstreamClosed(upstream: String, beforeHead: Bool) -> GatewayError {
        GatewayError(
            .connectionReset,
            beforeHead ? "the upstream closed the connection before the response head" : "the upstream closed the connection mid-response",
            upstream: upstream
        )
    }
}
