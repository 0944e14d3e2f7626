import GatewayConfig
import GatewayCore
import Logging
import NIOCore
import NIOHTTP1

/// One client connection: reads requests in order (keep-alive, pipelining),
/// validates each, hands it to the policy chain, streams the response back, and
/// switches to a byte tunnel on `CONNECT`.
struct ProxyConnection: Sendable {
    typealias Inbound = NIOAsyncChannelInboundStream<HTTPServerRequestPart>
    typealias Outbound = NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>

    let asyncChannel: ProxyChannelSetup.ClientChannel
    private(set) var httpHandlers: ProxyChannelSetup.HTTPHandlers
    let liveConfig: LiveConfig
    let tracker: ConnectionTracker
    let trackingID: Int
    let logger: Logger
    let requestIDs: RequestIDGenerator

    /// What to do with the connection after an exchange.
    enum Next {
        case readNext(Inbound.AsyncIterator)
        /// The connection now carries TLS the gateway terminates (an intercepted
        /// `CONNECT`): read the requests inside, all meant for `origin`.
        case intercepted(Inbound.AsyncIterator, InterceptedOrigin, ProxyChannelSetup.HTTPHandlers)
        case close
    }

    var channel: any Channel { asyncChannel.channel }

    /// `ip:port` of the client (computed once per connection).
    let clientAddress: String

    static func describe(_ address: SocketAddress?) -> String {
        address.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "unknown"
    }

    func run() async {
        let signal = httpHandlers.signal
        do {
            try await asyncChannel.executeThenClose { inbound, outbound in
                var connection = self
                var iterator = inbound.makeAsyncIterator()
                var origin: InterceptedOrigin?
                while true {
                    guard tracker.setIdle(trackingID, true) else { return }
                    let part: HTTPServerRequestPart?
                    do {
                        part = try await iterator.next()
                    } catch {
                        await respondToBrokenHead(error, outbound: outbound)
                        return
                    }
                    guard case .head(let head) = part else { return }
                    _ = tracker.setIdle(trackingID, false)
                    let next = await connection.exchange(head: head, iterator: iterator, outbound: outbound, origin: origin)
                    signal.exchangeFinished()
                    guard !tracker.isDraining else { return }
                    switch next {
                    case .readNext(let nextIterator):
                        iterator = nextIterator
                    case .intercepted(let nextIterator, let interceptedOrigin, let handlers):
                        iterator = nextIterator
                        origin = interceptedOrigin
                        connection = connection.with(httpHandlers: handlers)
                    case .close:
                        return
                    }
                }
            }
        } catch {
            logger.debug("client connection ended", metadata: ["error": "\(error)"])
        }
    }

    /// The same connection after its pipeline changed (interception).
    func with(httpHandlers: ProxyChannelSetup.HTTPHandlers) -> ProxyConnection {
        var copy = self
        copy.httpHandlers = httpHandlers
        return copy
    }

    /// The parser refused the head (or it timed out): say why, then close.
    private func respondToBrokenHead(_ error: any Error, outbound: Outbound) async {
        let gatewayError: GatewayError
        if let error = error as? GatewayError {
            gatewayError = error
        } else if let error = error as? HTTPParserError {
            gatewayError = Self.gatewayError(for: error)
        } else {
            return  // the connection is gone; nobody to answer
        }
        logger.info("refused request: \(gatewayError.code.rawValue)", metadata: ["client": "\(clientAddress)"])
        _ = try? await write(gatewayError.response(), requestMethod: .GET, requestVersion: .http1_1, keepAlive: false, outbound: outbound)
    }

    static func gatewayError(for error: HTTPParserError) -> GatewayError {
        switch error {
        case .headerOverflow:
            return GatewayError(.headTooLarge, "the request line and headers exceed the limit")
        case .unexpectedContentLength:
            return GatewayError(.requestSmuggling, "ambiguous request framing (Content-Length with Transfer-Encoding, or conflicting lengths)")
        case .invalidContentLength, .invalidMethod, .invalidHeaderToken:
            return GatewayError(.badRequest, GatewayError.describe(error))
        case .unknown:
            // llhttp reports an invalid Transfer-Encoding (including one next to a
            // Content-Length) as "unknown".
            return GatewayError(.requestSmuggling, "invalid Transfer-Encoding or ambiguous request framing")
        default:
            return GatewayError(.badRequest, "malformed request: \(GatewayError.describe(error))")
        }
    }
}
