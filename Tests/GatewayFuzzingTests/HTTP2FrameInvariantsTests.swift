import GatewayListener
import NIOHTTP1
import NIOHTTP2
import Testing
@testable import GatewayFuzzing

/// The http2-frames fuzz target drives NIOHTTP2 for real (its checks are not
/// vacuous): requests come out translated, the corpus reaches bodies, trailers
/// and resets, and broken input ends in the same connection error (a GOAWAY
/// written, the connection closed) whole or in pieces, without a trap.
struct HTTP2FrameInvariantsTests {
    /// A frame: the 9-byte header, then `payload`.
    static func frame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
        let length = payload.count
        let header: [UInt8] = [
            UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags,
            UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF),
        ]
        return header + payload
    }

    /// A field as an HPACK literal without indexing, its name new (RFC 7541 §6.2.2), no Huffman coding.
    static func field(_ name: String, _ value: String) -> [UInt8] {
        [0x00, UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
    }

    /// `:method GET`, `:scheme https`, `:path /` (static table entries 2, 7, 4), then `:authority`.
    static let getBlock: [UInt8] = [0x82, 0x87, 0x84] + field(":authority", "a.test")
    /// The client's SETTINGS, empty: the frame a client must send first.
    static let settings = frame(0x4)

    /// HEADERS (END_STREAM, END_HEADERS) on `stream`.
    static func headers(stream: UInt32, _ block: [UInt8] = HTTP2FrameInvariantsTests.getBlock) -> [UInt8] {
        frame(0x1, flags: 0x5, stream: stream, block)
    }

    /// The GOAWAY the server wrote last, and its error code.
    static func goAwayCode(_ run: HTTP2FrameInvariants.Run) throws -> Int? {
        let frames = try HTTP2FrameInvariants.writtenFrames(run.written)
        guard let last = frames.last, last.type == 0x7, last.payload.count >= 8 else { return nil }
        return last.payload.dropFirst(4).prefix(4).reduce(0) { $0 << 8 | Int($1) }
    }

    @Test func aGETWithCookieCrumbsIsTranslatedWholeAndInPieces() throws {
        let sent = Self.settings + Self.headers(stream: 1, Self.getBlock + Self.field("cookie", "a=1") + Self.field("cookie", "b=2"))
        let bytes = HTTP2FrameInvariants.preface + sent
        let whole = try HTTP2FrameInvariants.run(bytes, pieceSize: 0)
        #expect(whole.outcome.error == nil)
        #expect(!whole.outcome.closed)
        let stream = try #require(whole.outcome.streams.first)
        #expect(whole.outcome.streams.count == 1)
        #expect(stream.id == 1)
        #expect(stream.ended)
        guard case .request(let head, _, _)? = stream.translated else {
            Issue.record("not translated: \(stream)")
            return
        }
        #expect(head.method == .GET)
        #expect(head.uri == "/")
        #expect(head.headers.map(\.name) == ["host", "cookie"])
        #expect(head.headers["cookie"] == ["a=1; b=2"])
        for pieceSize in [1, 2, 9] {
            #expect(try HTTP2FrameInvariants.run(bytes, pieceSize: pieceSize).outcome == whole.outcome)
        }
        try HTTP2FrameInvariants.check([0x00, 0x03] + sent)
    }

    @Test func headersOnAServerStreamCloseTheConnectionWithAGOAWAY() throws {
        let sent = Self.settings + Self.headers(stream: 2)
        let bytes = HTTP2FrameInvariants.preface + sent
        let whole = try HTTP2FrameInvariants.run(bytes, pieceSize: 0)
        #expect(whole.outcome.error != nil)
        #expect(whole.outcome.closed)
        #expect(whole.outcome.streams.isEmpty)
        #expect(try Self.goAwayCode(whole) == 0x1, "PROTOCOL_ERROR")
        for pieceSize in [1, 2, 9, 100] {
            #expect(try HTTP2FrameInvariants.run(bytes, pieceSize: pieceSize).outcome == whole.outcome)
        }
        try HTTP2FrameInvariants.check([0x00, 0x01] + sent)
    }

    @Test func aFrameOf70000BytesClosesTheConnectionWithAGOAWAY() throws {
        let sent = Self.settings + Self.headers(stream: 1) + Self.frame(0x0, stream: 1, [UInt8](repeating: 0x61, count: 70_000))
        let bytes = HTTP2FrameInvariants.preface + sent
        let whole = try HTTP2FrameInvariants.run(bytes, pieceSize: 0)
        #expect(whole.outcome.closed)
        #expect(whole.outcome.error?.hasSuffix("UnableToParseFrame") == true, "\(whole.outcome.error ?? "no error")")
        #expect(whole.outcome.streams.count == 1, "the request before it was read")
        #expect(try Self.goAwayCode(whole) == 0x6, "FRAME_SIZE_ERROR")
        for pieceSize in [1, 255, 4096] {
            #expect(try HTTP2FrameInvariants.run(bytes, pieceSize: pieceSize).outcome == whole.outcome)
        }
        try HTTP2FrameInvariants.check([0x00, 0xFF] + sent)
    }

    /// The 101st stream opened while 100 are (SETTINGS_MAX_CONCURRENT_STREAMS) ends the connection.
    @Test func streamsOpenAtOnceStayWithinTheLimit() throws {
        let limit = HTTP2ServerSettings.maxConcurrentStreams
        let sent = Self.settings + (0...limit).flatMap { Self.headers(stream: UInt32(2 * $0 + 1)) }
        let whole = try HTTP2FrameInvariants.run(HTTP2FrameInvariants.preface + sent, pieceSize: 0)
        #expect(whole.mostOpenStreams == limit)
        #expect(whole.outcome.streams.count == limit)
        #expect(whole.outcome.closed && whole.outcome.error != nil)
        try HTTP2FrameInvariants.check([0x00, 0x07] + sent)
    }

    /// The committed corpus (scripts/fuzz/http2_seeds.py's seeds, or what a
    /// merge kept of their coverage) passes, and reaches what the target
    /// records: each expectation below is a branch of the recorder or the
    /// translation, which a merge keeps covered.
    @Test func theCorpusReachesRequestsBodiesTrailersAndResets() throws {
        let inputs = try CorpusReplayTests.inputs(.http2Frames)
        #expect(!inputs.isEmpty)
        var streams: [HTTP2FrameInvariants.Stream] = []
        for input in inputs {
            #expect(throws: Never.self, "\(input.name)") { try HTTP2FrameInvariants.check(input.bytes) }
            guard let sent = HTTP2FrameInvariants.client(input.bytes) else { continue }
            streams += try HTTP2FrameInvariants.run(sent.bytes, pieceSize: 0).outcome.streams
        }
        let heads = streams.compactMap { stream -> ClientRequestHead? in
            if case .request(let head, _, _)? = stream.translated { return head }
            return nil
        }
        #expect(!heads.isEmpty)
        #expect(heads.contains { !$0.headers["cookie"].isEmpty })
        #expect(streams.contains { $0.bodyBytes > 0 })
        #expect(streams.contains { $0.trailers > 0 })
        #expect(streams.contains { $0.reset })
    }
}
