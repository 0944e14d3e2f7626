import GatewayCore
import NIOCore
import NIOHTTP1

/// What an ``Exchange`` needs of its client, and all it may touch of it: the
/// HTTP/1.1 connection (``ClientConnectionHandler``) and an HTTP/2 stream
/// (``ClientHTTP2Stream``) implement it. Pure I/O: the client writes what it
/// is given in its protocol's framing; the exchange decides, observes the
/// response head, finishes its observers and writes its log line. The exchange
/// never sees a channel, a pipeline or the connection's own state
/// (async-http-client's `HTTPRequestExecutor` is the model). Called on the
/// client's event loop.
protocol ExchangeClient: AnyObject {
    /// The response head went out: a failure can no longer be answered with a response.
    var responseStarted: Bool { get }
    /// The client takes more of the response now (false: the upstream's reads wait).
    var isWritable: Bool { get }
    /// Writes the response head of an upstream's response, unflushed; returns
    /// whether its body is written too (false: HEAD, 204, 304).
    func writeResponseHead(_ head: UpstreamResponseHead, info: ExchangeInfo) -> Bool
    /// A part of the response body, unflushed.
    func writeResponseBodyPart(_ buffer: ByteBuffer)
    /// Flushes what the parts of one upstream read wrote.
    func flushResponse()
    /// Ends the response (flushed), with the upstream's trailer fields if it
    /// sent any (an HTTP/1.1 client gets them only when it asked, `TE: trailers`).
    func writeResponseEnd(trailers: HTTPHeaders?)
    /// A whole response of the gateway's own (a step's answer, an error before
    /// the upstream's head); returns the body bytes written. `keepAlive: false`:
    /// the client's connection (or stream) ends after it.
    @discardableResult
    func respond(_ response: ProxyResponse, info: ExchangeInfo, addVia: Bool, keepAlive: Bool) -> Int
    /// `100 Continue`, for a client that waits for it before its body.
    func writeContinue(info: ExchangeInfo)
    /// The exchange takes request body again: a read held for it may go.
    func requestBodyDemand()
    /// The response is cut short after its head: the client sees it end abnormally.
    func abortResponse()
    /// The upstream switched to the WebSocket protocol: the client's side becomes
    /// a tunnel to `tunnel` after the 101. `url` names it in the log line at close.
    func switchToTunnel(after head: UpstreamResponseHead, tunnel: UpstreamTunnel, info: ExchangeInfo, url: String)
}
