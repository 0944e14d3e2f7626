import GatewayCore
import NIOCore
import NIOHTTP1
import NIOHTTP2

/// The stream's side of ``ExchangeClient``: the response as HEADERS, DATA and
/// END_STREAM, on the last DATA (or on trailing HEADERS).
///
/// The latest body part is held until the exchange flushes or ends the
/// response (``heldData``; both come in the same upstream read that gave the
/// part): the end then goes out on it, not as an empty DATA frame after it.
/// A 1 KiB answer is HEADERS and one DATA, as nginx or HAProxy send it: one
/// frame fewer through NIOHTTP2's state machine, encoder and the TLS record
/// for each response.
extension ClientHTTP2Stream: ExchangeClient {
    var responseStarted: Bool { machine.headSent }

    func writeResponseHead(_ head: UpstreamResponseHead, info: ExchangeInfo) -> Bool {
        let bodyless = Self.isBodyless(status: head.status, method: info.method)
        writeHead(
            status: head.status, headers: head.headers, checked: head.fields.isHTTP2Ready, via: RequestRouter.responseVia, endStream: bodyless
        )
        return !bodyless
    }

    func writeResponseBodyPart(_ buffer: ByteBuffer) {
        guard machine.writesBody, !closedOnWire, buffer.readableBytes > 0 else { return }
        writeHeldData()
        // Counted now: the exchange sees the window as if it were written.
        sendWindow.wrote(buffer.readableBytes)
        heldData = buffer
        writabilityMaybeChanged()
    }

    func flushResponse() {
        writeHeldData()
        connection.io.flushSoon()
    }

    func writeResponseEnd(trailers: HTTPHeaders?) {
        defer { exchangeDone() }
        guard !closedOnWire else { return }
        defer { connection.io.flushSoon() }
        guard machine.responseEnd() else { return }  // a bodyless head ended the stream already
        if let trailers, !trailers.isEmpty {
            let fields = HTTP2Translation.trailers(trailers)
            if !fields.isEmpty {
                writeHeldData()
                write(.headers(.init(headers: fields, endStream: true)))
                return
            }
        }
        if let last = heldData {
            heldData = nil
            writeCounted(last, endStream: true)
        } else {
            writeData(ByteBuffer(), endStream: true)
        }
    }

    @discardableResult
    func respond(_ response: ProxyResponse, info: ExchangeInfo, addVia: Bool, keepAlive: Bool) -> Int {
        defer { exchangeDone() }
        guard !machine.headSent else { return 0 }
        let via = addVia ? RequestRouter.responseVia : nil
        let bodyless = Self.isBodyless(status: response.status, method: info.method)
        guard !bodyless, case .bytes(let buffer) = response.body.storage, buffer.readableBytes > 0 else {
            writeHead(status: response.status, headers: response.headers, via: via, endStream: true)
            connection.io.flushSoon()
            return 0
        }
        writeHead(status: response.status, headers: response.headers, via: via, endStream: false)
        _ = machine.responseEnd()
        writeData(buffer, endStream: true)
        connection.io.flushSoon()
        return buffer.readableBytes
    }

    func writeContinue(info: ExchangeInfo) {
        guard !machine.headSent else { return }
        write(.headers(.init(headers: [":status": "100"])))
        connection.io.flushSoon()
    }

    /// The response is cut short after its head: RST_STREAM (the client sees the stream fail).
    func abortResponse() {
        machine.closed()
        exchange = nil
        reset()
    }

    /// WebSocket over HTTP/2 (RFC 8441) is not offered (no SETTINGS_ENABLE_CONNECT_PROTOCOL),
    /// so no stream carries a handshake: should one get here, both sides close.
    func switchToTunnel(after head: UpstreamResponseHead, tunnel: UpstreamTunnel, info: ExchangeInfo, url: String) {
        tunnel.channel.close(promise: nil)
        abortResponse()
    }

    /// `checked`: `headers` are an HTTP/2 upstream's, ready as they are (``ResponseFields/isHTTP2Ready``).
    private func writeHead(status: HTTPResponseStatus, headers: HTTPHeaders, checked: Bool = false, via: String?, endStream: Bool) {
        machine.headWritten(endStream: endStream)
        let fields = HTTP2Translation.response(status: status, fields: headers, checked: checked, via: via)
        write(.headers(.init(headers: fields, endStream: endStream)))
    }

    /// DATA counts against the send window until NIOHTTP2 reports it sent.
    private func writeData(_ buffer: ByteBuffer, endStream: Bool) {
        guard !closedOnWire else { return }
        sendWindow.wrote(buffer.readableBytes)
        writeCounted(buffer, endStream: endStream)
    }

    /// The held body part goes to NIOHTTP2 without END_STREAM (more follows,
    /// or the exchange flushes what it wrote).
    func writeHeldData() {
        guard let part = heldData else { return }
        heldData = nil
        writeCounted(part, endStream: false)
    }

    /// DATA the send window counted already.
    private func writeCounted(_ buffer: ByteBuffer, endStream: Bool) {
        guard !closedOnWire else { return }
        connection.io.write(NIOAny(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(buffer), endStream: endStream)))), promise: nil)
    }

    private func write(_ payload: HTTP2Frame.FramePayload) {
        guard !closedOnWire else { return }
        connection.io.write(NIOAny(HTTP2Frame(streamID: id, payload: payload)), promise: nil)
    }

    /// No body goes with the response: HEAD, 1xx, 204, 304 (RFC 9110 §6.4.1).
    static func isBodyless(status: HTTPResponseStatus, method: HTTPMethod) -> Bool {
        method == .HEAD || status.code < 200 || status.code == 204 || status.code == 304
    }
}
