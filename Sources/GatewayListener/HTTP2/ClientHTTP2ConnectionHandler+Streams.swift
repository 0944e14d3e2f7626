import GatewayCore
import NIOCore
import NIOHTTP2

/// The connection's streams: a client's HEADERS on a new (higher) id opens
/// one; frames, window reports and closes go to theirs by id; a read's end
/// goes to the streams it touched; writes go through NIOHTTP2 and are flushed
/// once per read or loop tick (``HTTP2StreamIO``).
extension ClientHTTP2ConnectionHandler {
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        io.readStarted()
        let frame = unwrapInboundIn(data)
        let id = frame.streamID
        guard id != .rootStream else { return connectionFrame(frame.payload) }
        if let stream = streams[id] { return stream.receive(frame.payload) }
        // A new stream starts with HEADERS on an id above the last one; a frame
        // of a stream that closed here already (its late DATA) is dropped.
        guard case .headers = frame.payload, id > lastStreamID else { return }
        lastStreamID = id
        let stream = ClientHTTP2Stream(id: id, connection: self, environment: environment, origin: origin, clientAddress: clientAddress)
        streams[id] = stream
        streamOpened()
        stream.receive(frame.payload)
    }

    /// Connection-level frames: the client's initial window for new streams;
    /// a client's GOAWAY for an error is remembered as the reason.
    private func connectionFrame(_ payload: HTTP2Frame.FramePayload) {
        switch payload {
        case .settings(.settings(let settings)):
            if let window = settings.last(where: { $0.parameter == .initialWindowSize }) { clientInitialWindow = window.value }
        case .goAway(_, let errorCode, _) where errorCode != .noError:
            closing(.clientGoAway(errorCode))
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        io.readEnded()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch HTTP2UserEvent(event) {
        case .windowUpdated(let window):
            windowsChanged(window)
        case .streamClosed(let closed):
            guard let stream = streams.removeValue(forKey: closed.streamID) else { return }
            stream.closedOnWire = true
            stream.closed()
            streamClosed()
        case .streamCreated(let created):
            streams[created.streamID]?.opened(sendWindow: created.localInitialWindowSize.map(Int.init) ?? clientInitialWindow)
        case .other:
            context.fireUserInboundEventTriggered(event)
        }
    }

    private func windowsChanged(_ event: NIOHTTP2WindowUpdatedEvent) {
        guard event.streamID == .rootStream else {
            streams[event.streamID]?.windowsChanged(receive: event.inboundWindowSize, send: event.outboundWindowSize)
            return
        }
        // The connection's receive window is refilled as frames arrive (each stream's as it is read).
        if let size = event.inboundWindowSize, let increment = connectionWindow.reported(size) {
            io.write(NIOAny(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
            io.flushSoon()
        }
    }

    func closeAllStreams() {
        guard !streams.isEmpty else { return }
        let open = streams.values
        streams.removeAll()
        for stream in open { stream.closed() }
    }
}

extension ClientHTTP2Stream: HTTP2ReadBatchMember {}
