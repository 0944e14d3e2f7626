import GatewayCore
package import NIOCore
import NIOPosix

/// Asks the proxy port whether it accepts and answers: one connection, one
/// `GET /readyz` (``ProxyReadiness``), the status line read back within a
/// deadline. The admin port's `/readyz` runs it on each call, so readiness (and
/// the image's HEALTHCHECK) goes through the same accept path and handler as a
/// client's request: a listener that resets or never answers is not ready.
package struct ProxyReadinessProbe: Sendable {
    package enum Result: Equatable, Sendable {
        case ready
        /// Why not, for the readiness body (no secret can be in it: an address and an error).
        case notReady(String)
    }

    let eventLoopGroup: any EventLoopGroup
    let timeout: TimeAmount

    package init(eventLoopGroup: any EventLoopGroup, timeout: TimeAmount = .seconds(2)) {
        self.eventLoopGroup = eventLoopGroup
        self.timeout = timeout
    }

    /// Probes the proxy listening on `address` (an unspecified address is probed on loopback).
    package func check(_ address: SocketAddress) async -> Result {
        let target = Self.reachable(address)
        let shown = target.ipAddress.map { "\($0):\(target.port ?? 0)" } ?? "\(target)"
        let eventLoop = eventLoopGroup.next()
        let status = eventLoop.makePromise(of: Substring.self)
        let deadline = eventLoop.scheduleTask(in: timeout) {
            status.fail(ProbeFailure.description("no answer within \(timeout.nanoseconds / 1_000_000) ms"))
        }
        let connection = ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(StatusLineReader(status: status)) }
            }
            .connect(to: target)
        connection.whenFailure { status.fail($0) }
        defer {
            deadline.cancel()
            connection.whenSuccess { $0.close(promise: nil) }
        }
        do {
            let line = try await status.futureResult.get()
            guard line.hasPrefix("HTTP/1.1 200") || line.hasPrefix("HTTP/1.0 200") else {
                return .notReady("proxy port \(shown) answered \(TerminalSafety.escaped(String(line.prefix(64))))")
            }
            return .ready
        } catch {
            return .notReady("proxy port \(shown): \(error)")
        }
    }

    /// Where to reach a listener bound to `address`: loopback for `0.0.0.0` and `::`.
    static func reachable(_ address: SocketAddress) -> SocketAddress {
        let port = address.port ?? 0
        switch address.ipAddress {
        case "0.0.0.0": return (try? SocketAddress(ipAddress: "127.0.0.1", port: port)) ?? address
        case "::": return (try? SocketAddress(ipAddress: "::1", port: port)) ?? address
        default: return address
        }
    }

    private enum ProbeFailure: Error, CustomStringConvertible {
        case description(String)
        var description: String {
            switch self { case .description(let text): text }
        }
    }

    /// Sends the probe once active; succeeds `status` with the first line the proxy answers.
    private final class StatusLineReader: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        private let status: EventLoopPromise<Substring>
        private var received = ByteBuffer()

        init(status: EventLoopPromise<Substring>) {
            self.status = status
        }

        func channelActive(context: ChannelHandlerContext) {
            let request = "GET \(ProxyReadiness.path) HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n"
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: request)), promise: nil)
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var part = unwrapInboundIn(data)
            received.writeBuffer(&part)
            let text = String(buffer: received)
            if let end = text.firstIndex(where: { $0 == "\r\n" || $0 == "\n" }) {
                status.succeed(text[..<end])
            } else if received.readableBytes > 1024 {
                status.fail(ProbeFailure.description("no status line in the first 1024 bytes"))
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            status.fail(ProbeFailure.description("connection closed before an answer"))
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            status.fail(error)
            context.close(promise: nil)
        }
    }
}
