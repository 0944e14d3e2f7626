import GatewayConfig
import GatewayListener
import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// A client's bytes on an intercepted HTTP/2 connection, through the
/// `NIOHTTP2Handler` the listener builds (server mode, ``HTTP2ServerSettings``,
/// a stream channel per request) in an `EmbeddedChannel`. Each stream's first
/// HEADERS goes through `HTTP2Translation.request`, as the gateway's stream
/// handler does; behind the handler, as the gateway's connection handler does,
/// any error NIOHTTP2 raises closes the connection.
///
/// The first byte: bit 0 set, the bytes are sent as they are; clear, the client
/// connection preface (`PRI * HTTP/2.0…`) goes first. The second byte: the bytes
/// arrive again in pieces of that many (0: all at once only). Properties:
/// - bad input ends in NIOHTTP2's error (GOAWAY or RST_STREAM), never a trap;
/// - all at once and piece by piece, the same streams carry the same translated
///   requests, body bytes, trailers, ends and resets, and the connection ends
///   the same way (open, or closed after the same error), for inputs shorter
///   than the initial flow-control window (65,535 bytes: past it, whether the
///   server's WINDOW_UPDATE went out between two pieces rightly decides);
/// - a translated request has lowercase field names, no pseudo-field, `host`
///   at most once and first, at most one `cookie`, a method other than CONNECT
///   and a non-empty target (which keeps the target parser's properties);
/// - the server's bytes are whole control frames of at most 16,384 bytes (the
///   peer's default SETTINGS_MAX_FRAME_SIZE), its SETTINGS first, announcing
///   ``HTTP2ServerSettings/maxConcurrentStreams``;
/// - no more streams are open at once than that.
enum HTTP2FrameInvariants {
    /// One stream, as the gateway's stream handler would see it.
    struct Stream: Equatable {
        var id: HTTP2StreamID
        /// Its first HEADERS through `HTTP2Translation.request`.
        var translated: Translated?
        var bodyBytes = 0
        /// HEADERS after the first (trailers).
        var trailers = 0
        /// The client's END_STREAM arrived.
        var ended = false
        /// The client's RST_STREAM arrived.
        var reset = false
    }

    enum Translated: Equatable {
        case request(ClientRequestHead, acceptsTrailers: Bool, declaredLength: Int?)
        case refused(HTTP2Translation.Refusal)
    }

    struct Outcome: Equatable {
        /// In the order they opened.
        var streams: [Stream] = []
        /// The first error NIOHTTP2 raised (its type); the connection closed after it.
        var error: String?
        var closed = false
    }

    /// One pass over the bytes: the outcome, what the server wrote, the most streams open at once.
    struct Run {
        var outcome: Outcome
        var written: [UInt8]
        var mostOpenStreams: Int
    }

    /// The client connection preface, sent first unless the input's first byte says otherwise.
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    /// The listener's default head limit (`limits.max_head_bytes`): SETTINGS_MAX_HEADER_LIST_SIZE.
    static let maxHeadBytes = ListenerLimits().maxHeadBytes
    /// The largest frame the server may send: the peer's SETTINGS_MAX_FRAME_SIZE, unless raised.
    static let maxFrameSize = 16_384
    /// Inputs shorter than this (the initial flow-control window) arrive the same whatever the pieces.
    static let initialWindow = 65_535

    static func check(_ input: [UInt8]) throws(InvariantViolation) {
        guard let sent = client(input) else { return }
        let bytes = sent.bytes, pieceSize = sent.pieceSize
        let whole = try run(bytes, pieceSize: 0)
        try check(whole)
        guard pieceSize > 0 else { return }
        let pieces = try run(bytes, pieceSize: pieceSize)
        try check(pieces)
        if bytes.count < initialWindow {
            try require(pieces.outcome == whole.outcome, "in pieces of \(pieceSize): \(pieces.outcome); all at once: \(whole.outcome)")
        }
    }

    /// What the client sends (the preface first unless bit 0 of the first byte is set), and the piece size.
    static func client(_ input: [UInt8]) -> (bytes: [UInt8], pieceSize: Int)? {
        guard let options = input.first else { return nil }
        var bytes = options & 1 == 1 ? [UInt8]() : preface
        bytes += input.dropFirst(2)
        return (bytes, input.count > 1 ? Int(input[1]) : 0)
    }

    static func check(_ run: Run) throws(InvariantViolation) {
        for stream in run.outcome.streams {
            if case .request(let head, _, _)? = stream.translated { try check(head, stream: stream.id) }
        }
        try checkWritten(run.written)
        let most = run.mostOpenStreams, limit = HTTP2ServerSettings.maxConcurrentStreams
        try require(most <= limit, "\(most) streams open at once, over SETTINGS_MAX_CONCURRENT_STREAMS \(limit)")
    }

    /// Feeds `bytes` to a fresh connection, all at once (`pieceSize` 0) or in pieces.
    static func run(_ bytes: [UInt8], pieceSize: Int) throws(InvariantViolation) -> Run {
        let channel = EmbeddedChannel()
        let recording = Recording()
        var written: [UInt8] = []
        func drain() {
            while let buffer = try? channel.readOutbound(as: ByteBuffer.self) { written += buffer.readableBytesView }
        }
        do {
            // Active first, as after the TLS handshake: NIOHTTP2 writes its SETTINGS when added.
            let address = try SocketAddress(ipAddress: "127.0.0.1", port: 443)
            channel.connect(to: address, promise: nil)
            let sync = channel.pipeline.syncOperations
            try sync.addHandler(makeHandler(channel.eventLoop, recording))
            try sync.addHandler(ConnectionRecorder(recording: recording))
        } catch {
            throw InvariantViolation(.http2Frames, "the connection could not be set up: \(error)")
        }
        drain()
        let step = pieceSize > 0 ? pieceSize : max(1, bytes.count)
        var offset = 0
        while offset < bytes.count, channel.isActive {
            let end = min(bytes.count, offset + step)
            _ = try? channel.writeInbound(ByteBuffer(bytes: bytes[offset..<end]))
            offset = end
            drain()
        }
        recording.outcome.closed = !channel.isActive
        _ = try? channel.finish(acceptAlreadyClosed: true)
        drain()
        return Run(outcome: recording.outcome, written: written, mostOpenStreams: recording.mostOpenStreams)
    }

    /// The listener's handler (`ClientConnectionHandler+HTTP2.swift`), with a recorder per stream.
    static func makeHandler(_ loop: any EventLoop, _ recording: Recording) -> NIOHTTP2Handler {
        let bound = NIOLoopBound(recording, eventLoop: loop)
        return NIOHTTP2Handler(
            mode: .server, eventLoop: loop,
            connectionConfiguration: HTTP2ServerSettings.connection(maxHeaderListSize: maxHeadBytes),
            streamConfiguration: HTTP2ServerSettings.stream,
            streamDelegate: StreamCounter(recording: bound)
        ) { stream in
            let recording = bound.value
            let id = (try? stream.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)) ?? .rootStream
            recording.outcome.streams.append(Stream(id: id))
            do {
                try stream.pipeline.syncOperations.addHandler(StreamRecorder(recording: recording, index: recording.outcome.streams.count - 1))
                return stream.eventLoop.makeSucceededVoidFuture()
            } catch {
                return stream.eventLoop.makeFailedFuture(error)
            }
        }
    }

    static func check(_ head: ClientRequestHead, stream: HTTP2StreamID) throws(InvariantViolation) {
        let names = head.headers.map(\.name)
        func require(_ condition: Bool, _ text: String) throws(InvariantViolation) {
            try InvariantViolation.require(condition, .http2Frames, "stream \(stream): \(text): \(head.method) \(head.uri.debugDescription) \(Array(head.headers))")
        }
        try require(head.method != .CONNECT, "CONNECT translated")
        try require(!head.uri.isEmpty, "an empty target")
        for name in names {
            try require(name.utf8.first != UInt8(ascii: ":"), "pseudo-field \(name) kept")
            try require(!name.utf8.contains { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }, "field name \(name) not lowercase")
        }
        let hosts = names.indices.filter { names[$0] == "host" }
        try require(hosts.count <= 1, "\(hosts.count) host fields")
        try require(hosts.allSatisfy { $0 == 0 }, "host is not the first field")
        try require(names.filter { $0 == "cookie" }.count <= 1, "cookie crumbs not joined")
        // The stream handler then parses the target as an HTTP/1.1 request's.
        try TargetParserInvariants.check(uri: head.uri, isConnect: false)
    }

    /// One frame the server wrote.
    struct WrittenFrame {
        var type: UInt8
        var flags: UInt8
        var stream: UInt32
        var payload: ArraySlice<UInt8>
    }

    /// The server's bytes, frame by frame; throws unless they are whole frames of at most ``maxFrameSize`` bytes.
    static func writtenFrames(_ bytes: [UInt8]) throws(InvariantViolation) -> [WrittenFrame] {
        var frames: [WrittenFrame] = []
        var offset = 0
        while offset < bytes.count {
            try require(bytes.count - offset >= 9, "the server's bytes end in \(bytes.count - offset) bytes of a frame header")
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            try require(length <= maxFrameSize, "the server wrote a frame of \(length) bytes, over \(maxFrameSize)")
            try require(bytes[offset + 5] & 0x80 == 0, "the server set the reserved bit of a stream ID")
            let stream = bytes[(offset + 5)..<(offset + 9)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let start = offset + 9
            try require(bytes.count - start >= length, "the server's last frame is cut short: \(bytes.count - start) of \(length) bytes")
            frames.append(WrittenFrame(type: bytes[offset + 3], flags: bytes[offset + 4], stream: stream, payload: bytes[start..<(start + length)]))
            offset = start + length
        }
        return frames
    }

    static func checkWritten(_ bytes: [UInt8]) throws(InvariantViolation) {
        let frames = try writtenFrames(bytes)
        guard let first = frames.first else { throw InvariantViolation(.http2Frames, "the server wrote nothing (no SETTINGS)") }
        try require(first.type == 0x4 && first.flags & 0x1 == 0 && first.stream == 0, "the server's first frame is not its SETTINGS: type \(first.type)")
        var settings: [(id: Int, value: Int)] = []
        for index in stride(from: first.payload.startIndex, to: first.payload.endIndex - 5, by: 6) {
            let value = first.payload[(index + 2)..<(index + 6)].reduce(0) { $0 << 8 | Int($1) }
            settings.append((id: Int(first.payload[index]) << 8 | Int(first.payload[index + 1]), value: value))
        }
        try require(
            settings.contains { $0.id == 3 && $0.value == HTTP2ServerSettings.maxConcurrentStreams },
            "the server's SETTINGS do not announce \(HTTP2ServerSettings.maxConcurrentStreams) concurrent streams: \(settings)"
        )
        // No response is written: only RST_STREAM, SETTINGS, PING, GOAWAY and WINDOW_UPDATE go out.
        for frame in frames {
            try require([0x3, 0x4, 0x6, 0x7, 0x8].contains(frame.type), "the server wrote a frame of type \(frame.type) on stream \(frame.stream)")
            if frame.type == 0x4 { try require(frame.payload.count % 6 == 0, "a SETTINGS frame of \(frame.payload.count) bytes") }
        }
    }

    private static func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(InvariantViolation) {
        try InvariantViolation.require(condition, .http2Frames, message())
    }
}
