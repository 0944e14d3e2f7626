import GatewayCore
import NIOCore

/// When a connection's connect and TLS phases happened, reported to the first
/// request that waited for it.
struct ConnectionTimings: Sendable {
    var connectStart: ContinuousClock.Instant
    var connectEnd: ContinuousClock.Instant
    var tlsStart: ContinuousClock.Instant?
    var tlsEnd: ContinuousClock.Instant?
}

/// One established upstream connection: its channel (TLS for https, then an
/// `UpstreamAttemptHandler`), its pool identity and how it was opened.
final class UpstreamConnection: Sendable {
    let id: Int
    let key: UpstreamKey
    let channel: any Channel
    let handler: NIOLoopBound<UpstreamAttemptHandler>
    let timings: ConnectionTimings

    init(id: Int, key: UpstreamKey, channel: any Channel, handler: NIOLoopBound<UpstreamAttemptHandler>, timings: ConnectionTimings) {
        self.id = id
        self.key = key
        self.channel = channel
        self.handler = handler
        self.timings = timings
    }

    var eventLoop: any EventLoop { channel.eventLoop }

    var closeFuture: EventLoopFuture<Void> { channel.closeFuture }

    func close() {
        channel.close(promise: nil)
    }
}
