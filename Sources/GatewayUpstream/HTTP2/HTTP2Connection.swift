import GatewayCore
import NIOCore
import NIOHTTP2

/// What an HTTP/2 connection reports to the pool, from its event loop.
struct HTTP2ConnectionEvents: Sendable {
    /// The server changed `SETTINGS_MAX_CONCURRENT_STREAMS` (after its first SETTINGS).
    let maxStreamsChanged: @Sendable (Int) -> Void
    /// GOAWAY came, or the connection failed: it takes no new stream.
    let goingAway: @Sendable () -> Void
    /// One of its streams ended, or never opened: its slot is free.
    let streamEnded: @Sendable () -> Void
}

/// A new connection, by the protocol it speaks.
enum NegotiatedConnection: Sendable {
    case http1(UpstreamConnection)
    /// With the server's limit of concurrent streams, from its first SETTINGS.
    case http2(HTTP2Connection, maxStreams: Int)

    func close() {
        switch self {
        case .http1(let connection): connection.close()
        case .http2(let connection, _): connection.close()
        }
    }
}

/// One established HTTP/2 upstream connection: TLS (for https), then
/// `NIOHTTP2Handler` in client mode without a stream multiplexer, then an
/// ``UpstreamHTTP2ConnectionHandler`` that runs the streams and reads the server's
/// SETTINGS and GOAWAY. Each attempt opens a stream on it (`+Stream.swift`); the
/// pool counts its streams.
final class HTTP2Connection: Sendable {
    let id: Int
    let key: UpstreamKey
    /// `host:port`, as errors name it: made once, not per stream.
    let upstream: String
    let channel: any Channel
    /// Used on the channel's loop only.
    let handler: NIOLoopBound<UpstreamHTTP2ConnectionHandler>
    let timings: ConnectionTimings
    let events: HTTP2ConnectionEvents

    private init(
        id: Int, key: UpstreamKey, channel: any Channel, handler: UpstreamHTTP2ConnectionHandler,
        timings: ConnectionTimings, events: HTTP2ConnectionEvents
    ) {
        self.id = id
        self.key = key
        self.upstream = key.upstream
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        self.timings = timings
        self.events = events
    }

    var eventLoop: any EventLoop { channel.eventLoop }

    var closeFuture: EventLoopFuture<Void> { channel.closeFuture }

    func close() {
        channel.close(promise: nil)
    }

    /// A stream's receive window: what the server may send on a stream the
    /// client does not read (a slow client's), buffered here at most. The
    /// window is refilled only as the stream's reader takes what was buffered.
    static let streamWindow = 256 * 1024
    /// The connection's receive window, refilled as frames arrive: one held
    /// stream never stops the others.
    static let connectionWindow = 4 * 1024 * 1024
    /// Reset streams whose late frames are ignored: more than any server lets run at once.
    static let recentlyResetStreams = 2048
    /// The largest response field section accepted (HPACK-decoded).
    static let maxHeaderListSize = 64 * 1024
    /// The stream limit when the server's SETTINGS name none (RFC 9113 §6.5.2
    /// says unlimited; 100 is what it recommends at least), and the most
    /// streams used on one connection whatever the server allows.
    static let defaultMaxStreams = 100
    static let maxStreamsCap = 1000

    static func streamLimit(announced: Int?) -> Int {
        min(announced ?? defaultMaxStreams, maxStreamsCap)
    }

    /// Adds the HTTP/2 handlers to an opened channel (on its loop, right after
    /// the handshake) and completes when the server's first SETTINGS came.
    static func start(
        id: Int,
        key: UpstreamKey,
        opened: OpenedChannel,
        requestTimeout: TimeAmount,
        events: HTTP2ConnectionEvents
    ) -> EventLoopFuture<NegotiatedConnection> {
        let channel = opened.channel
        let upstream = key.upstream
        let settings = channel.eventLoop.makePromise(of: Int.self)
        do {
            // Push is disabled in our SETTINGS: NIOHTTP2 refuses a PUSH_PROMISE as a protocol error.
            let handler = UpstreamHTTP2ConnectionHandler(
                firstSettings: settings, events: events, upstream: upstream, requestTimeout: requestTimeout, eventLoop: channel.eventLoop
            )
            try channel.pipeline.syncOperations.addHandler(
                NIOHTTP2Handler(mode: .client, connectionConfiguration: connectionConfiguration, streamConfiguration: streamConfiguration)
            )
            try channel.pipeline.syncOperations.addHandler(handler)
            let connection = HTTP2Connection(
                id: id, key: key, channel: channel, handler: handler, timings: opened.timings, events: events
            )
            return settings.futureResult
                .map { maxStreams in NegotiatedConnection.http2(connection, maxStreams: maxStreams) }
                .flatMapErrorThrowing { error in
                    if case ChannelError.eof = error { throw GatewayError.upstreamClosed(upstream: upstream, beforeHead: true) }
                    throw GatewayError.attemptFailure(error, upstream: upstream)
                }
        } catch {
            settings.fail(error)
            return channel.eventLoop.makeFailedFuture(error)
        }
    }

    static var connectionConfiguration: NIOHTTP2Handler.ConnectionConfiguration {
        var configuration = NIOHTTP2Handler.ConnectionConfiguration()
        configuration.initialSettings = [
            // Streams the server may open: none (push disabled).
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
            HTTP2Setting(parameter: .enablePush, value: 0),
            HTTP2Setting(parameter: .initialWindowSize, value: streamWindow),
            HTTP2Setting(parameter: .maxHeaderListSize, value: maxHeaderListSize),
        ]
        configuration.targetWindowSize = connectionWindow
        // Frames the server sent before our RST_STREAM reached it are ignored for
        // this many reset streams (NIOHTTP2: 32); beyond, they are a connection
        // error. A client that goes away cancels every stream it had: 50 at once
        // under load made nginx's answers to them kill the connection.
        configuration.maximumRecentlyResetStreams = recentlyResetStreams
        // The fields are checked once, as the stream reads them (HTTP2ResponseSection),
        // and the request's are built valid (HTTP2Fields): NIOHTTP2's second walk over
        // every section is off on upstream connections, and so is its content-length
        // check (another read of each section, both ways): HTTP2ResponseSection
        // reads the length and the stream's machine holds the body to it.
        configuration.headerBlockValidation = .disabled
        configuration.contentLengthValidation = .disabled
        return configuration
    }

    /// Stream windows are refilled by ``UpstreamHTTP2Stream`` (to ``streamWindow``).
    static var streamConfiguration: NIOHTTP2Handler.StreamConfiguration {
        var configuration = NIOHTTP2Handler.StreamConfiguration()
        configuration.targetWindowSize = streamWindow
        return configuration
    }
}
