@testable import GatewayUpstream
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP2
import Testing

/// The connection-level handler of an upstream HTTP/2 connection: which
/// events take the connection out of the pool.
struct UpstreamHTTP2ConnectionHandlerTests {
    final class Recorder: Sendable {
        let goingAway = NIOLockedValueBox(0)
        var events: HTTP2ConnectionEvents {
            HTTP2ConnectionEvents(
                maxStreamsChanged: { _ in }, goingAway: { self.goingAway.withLockedValue { $0 += 1 } }, streamEnded: {}
            )
        }
    }

    func started() throws -> (EmbeddedChannel, Recorder) {
        let channel = EmbeddedChannel()
        let recorder = Recorder()
        let settings = channel.eventLoop.makePromise(of: Int.self)
        try channel.pipeline.syncOperations.addHandler(
            UpstreamHTTP2ConnectionHandler(
                firstSettings: settings, events: recorder.events, upstream: "h:443", requestTimeout: .seconds(5), eventLoop: channel.eventLoop
            )
        )
        try channel.writeInbound(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: 128)]))))
        #expect(try settings.futureResult.wait() == 128)
        return (channel, recorder)
    }

    /// Frames on a stream reset longer ago than NIOHTTP2 remembers are a
    /// connection error it reports as `StreamClosed` (after its GOAWAY): the
    /// connection takes no new stream. (It kept taking them, and nginx's
    /// answers to them were refused: every later request hung.)
    @Test func streamClosedDrainsTheConnection() throws {
        let (channel, recorder) = try started()
        channel.pipeline.fireErrorCaught(NIOHTTP2Errors.streamClosed(streamID: 101, errorCode: .streamClosed))
        #expect(recorder.goingAway.withLockedValue { $0 } == 1)
        channel.pipeline.fireErrorCaught(NIOHTTP2Errors.noSuchStream(streamID: 103))
        #expect(recorder.goingAway.withLockedValue { $0 } == 1, "drained once")
    }

    @Test func goAwayDrainsTheConnection() throws {
        let (channel, recorder) = try started()
        try channel.writeInbound(HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: 7, errorCode: .noError, opaqueData: nil)))
        #expect(recorder.goingAway.withLockedValue { $0 } == 1)
    }

    /// Late frames of a burst of streams the gateway reset (a client that left
    /// cancels all of its requests at once) are ignored, not a connection error.
    @Test func manyRecentlyResetStreamsAreRemembered() {
        #expect(HTTP2Connection.connectionConfiguration.maximumRecentlyResetStreams >= 1024)
    }
}
