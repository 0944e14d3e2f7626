import GatewayCore
import NIOCore
import NIOHTTP2

/// The connection's streams: opening one (the next odd id, its HEADERS
/// written at once), the table frames and events are routed by, the end of a
/// read for the streams it touched, the connection's receive window (the
/// writes, read batch and flush are ``HTTP2StreamIO``'s).
extension UpstreamHTTP2ConnectionHandler {
    /// Opens a stream for `request` on a slot the pool leased. Returns nil when
    /// the connection can take no stream (closed, going away, out of ids):
    /// then nothing was sent and `ticket` heard it (the attempt may lease another).
    func openStream(
        _ request: ProxyRequest,
        recorder: AttemptRecorder,
        delegate: any UpstreamAttemptDelegate,
        ticket: HTTP2StreamTicket
    ) -> UpstreamHTTP2Stream? {
        guard let context, context.channel.isActive, !goingAway, nextStreamID <= Int(Int32.max) else {
            if nextStreamID > Int(Int32.max) { drain(failingStartWith: ChannelError.eof) }
            ticket.openFailed(ConnectionClosedBeforeUse(upstream: upstream))
            return nil
        }
        let id = HTTP2StreamID(nextStreamID)
        nextStreamID += 2
        let stream = UpstreamHTTP2Stream(
            id: id, connection: self, isHEAD: request.method == .HEAD, recorder: recorder, delegate: delegate, ticket: ticket,
            requestTimeout: requestTimeout
        )
        streams[id] = stream
        stream.start(request)
        return stream
    }

    /// The `:authority` of `request`: the last one made is kept, as every stream
    /// of a connection goes to one origin (made again when the host or port differ).
    func authority(of request: ProxyRequest) -> String {
        if let last = lastAuthority, last.port == request.port, last.scheme == request.scheme, last.host == request.host {
            return last.value
        }
        let value = request.authority
        lastAuthority = (request.host, request.port, request.scheme, value)
        return value
    }

    /// The stream's exchange is over: late frames for its id are dropped.
    func forget(_ stream: UpstreamHTTP2Stream) {
        if streams[stream.id] === stream { streams[stream.id] = nil }
    }

    func closeAllStreams() {
        guard !streams.isEmpty else { return }
        let open = streams.values
        streams.removeAll()
        for stream in open { stream.connectionClosed() }
    }

    func streamClosed(_ event: StreamClosedEvent) {
        streams.removeValue(forKey: event.streamID)?.closed(reason: event.reason)
    }

    func windowUpdated(_ event: NIOHTTP2WindowUpdatedEvent) {
        guard let size = event.inboundWindowSize else { return }
        if event.streamID != .rootStream {
            streams[event.streamID]?.inboundWindowChanged(to: size)
        } else if let increment = connectionWindow.reported(size) {
            // The connection's window is refilled as frames arrive: a held stream never stops the others.
            io.write(NIOAny(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
            io.flushSoon()
        }
    }
}

extension UpstreamHTTP2Stream: HTTP2ReadBatchMember {}
