import GatewayCore
import NIOCore
import NIOHTTP2

/// The connection's streams: opening one (the next odd id, its HEADERS
/// written at once), the table frames and events are routed by, the end of a
/// read for the streams it touched (``HTTP2ReadBatch``), the connection's
/// receive window, and the flush made once per read or loop tick.
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
            id: id, connection: self, request: request, recorder: recorder, delegate: delegate, ticket: ticket,
            requestTimeout: requestTimeout
        )
        streams[id] = stream
        stream.start()
        return stream
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
            write(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment)), promise: nil)
            flushSoon()
        }
    }

    // MARK: Reads and writes

    /// `stream` got frames: its read ends with the connection's. Returns false
    /// outside a read of the connection (the stream ends its read itself).
    func joinReadBatch(_ stream: UpstreamHTTP2Stream) -> Bool {
        guard flusher.isReading else { return false }
        readBatch.join(stream)
        return true
    }

    func write(_ frame: HTTP2Frame, promise: EventLoopPromise<Void>?) {
        guard let context else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        context.write(wrapOutboundOut(frame), promise: promise)
    }

    /// What was written goes out at the end of the current read, or of this loop
    /// tick (``TickFlusher``).
    func flushSoon() {
        flusher.flushSoon()
    }
}

extension UpstreamHTTP2Stream: HTTP2ReadBatchMember {}
