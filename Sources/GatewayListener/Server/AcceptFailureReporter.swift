import GatewayCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging
import NIOCore

/// The last handler of the proxy's listening channel: what failed between
/// `accept` and a connection's first read reaches it, and is counted and
/// logged, never a silent close. Two kinds:
/// - a connection accepted but not set up (a socket option refused, the
///   pipeline not built): NIO closes it and reports the error here
///   (`gateway_client_connections_refused_total{reason="setup_failed"}`);
/// - `accept` itself failing (`EMFILE`: out of descriptors) while the listener
///   goes on (`reason="accept_failed"`).
///
/// A failing accept path fails every connection, so the log is rate-limited
/// (``LogRateLimiter``): one line per 10 s at most, saying how many more were seen since.
final class AcceptFailureReporter: ChannelInboundHandler {
    typealias InboundIn = any Channel

    private let events: any GatewayEvents
    private let logger: Logger
    private var limiter = LogRateLimiter()

    init(events: any GatewayEvents, logger: Logger) {
        self.events = events
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // An accepted connection, set up: the channel's tail registers it.
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let reason = Self.isAcceptError(error) ? "accept_failed" : "setup_failed"
        events.clientConnectionRefused(reason: reason)
        guard let unlogged = limiter.admit() else { return }
        let what = reason == "accept_failed"
            ? "could not accept a client connection"
            : "closed a client connection it could not set up"
        logger.error("proxy \(what): \(error)\(LogRateLimiter.more(unlogged))", metadata: ["reason": "\(reason)"])
    }

    /// `accept(2)` failed (descriptors, memory), as opposed to setting up a connection it returned.
    private static func isAcceptError(_ error: any Error) -> Bool {
        guard let error = error as? IOError else { return false }
        return [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error.errnoCode)
    }
}
