import NIOCore
import NIOHTTP2

/// The stream's flow both ways. Request frames: handed to the exchange as
/// they come while it takes body, held while it does not (a `read` held, as
/// a channel's would be), and the receive window refilled only as what was
/// held is handed on. Response: writable while the send window, less what
/// NIOHTTP2 still buffers for it, has room (``HTTP2SendWindow``) and the
/// connection's socket is writable; the exchange hears when that changes.
extension ClientHTTP2Stream {
    /// A frame of this stream, from the connection's handler.
    func receive(_ payload: HTTP2Frame.FramePayload) {
        if reading, held?.isEmpty ?? true {
            _ = connection.io.join(self)
            process(payload)
            return
        }
        if case .data(let data) = payload { receiveWindow.held(Self.flowControlledLength(data)) }
        if held == nil { held = CircularBuffer(initialCapacity: 8) }
        held!.append(payload)
    }

    private var mayRead: Bool {
        exchange?.wantsRequestBody ?? true
    }

    /// The connection's read is over (or held frames were handed on): the next
    /// read is asked for, and held while the exchange takes no request body.
    func readComplete() {
        switch machine.read(mayRead: mayRead) {
        case .read:
            reading = true
        case .hold(let first):
            reading = false
            if first { timeouts?.readsHeld(true) }
        }
    }

    /// The exchange takes request body again: a held read goes.
    func requestBodyDemand() {
        guard !closedOnWire, machine.demand(mayRead: mayRead) else { return }
        timeouts?.readsHeld(false)
        reading = true
        guard var frames = held, !frames.isEmpty else { return }
        held = nil
        let inConnectionRead = connection.io.join(self)
        var handedOn = 0
        while !closedOnWire, let payload = frames.popFirst() {
            if case .data(let data) = payload { handedOn += Self.flowControlledLength(data) }
            process(payload)
        }
        if handedOn > 0, let increment = receiveWindow.handedOn(handedOn) { sendWindowUpdate(increment) }
        if !inConnectionRead { readComplete() }
    }

    // MARK: Windows

    /// NIOHTTP2 reported the stream's windows (a frame received or sent, a WINDOW_UPDATE).
    func windowsChanged(receive: Int?, send: Int?) {
        if let receive, let increment = receiveWindow.reported(receive) { sendWindowUpdate(increment) }
        if let send {
            sendWindow.reported(send)
            writabilityMaybeChanged()
        }
    }

    /// The stream opened with the client's initial send window.
    func opened(sendWindow initial: Int) {
        sendWindow.opened(initial: initial)
        writabilityMaybeChanged()
    }

    private func sendWindowUpdate(_ increment: Int) {
        // After the request's END_STREAM the client sends no more: no window to refill.
        guard !closedOnWire, machine.request != .ended else { return }
        connection.io.write(NIOAny(HTTP2Frame(streamID: id, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
        connection.io.flushSoon()
    }

    /// What a DATA frame takes of the window: its bytes and its padding (with the length octet).
    static func flowControlledLength(_ data: HTTP2Frame.FramePayload.Data) -> Int {
        data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
    }

    // MARK: Writability

    var isWritable: Bool { connection.isChannelWritable && sendWindow.hasRoom }

    /// The exchange (and the send timeout) hear when the stream's writability changed.
    func writabilityMaybeChanged() {
        let writable = isWritable
        guard writable != wasWritable else { return }
        wasWritable = writable
        if writable {
            timeouts?.writabilityChanged(writable: true)
            exchange?.clientWritable()
        } else if !machine.responseEnded || exchange != nil {
            streamTimeouts.writabilityChanged(writable: false)
        }
    }
}
