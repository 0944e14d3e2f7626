import GatewayCore
import NIOCore
import NIOHTTP1

/// The head and the chunked body: the parts of a response that need scanning.
extension HTTP1ResponseFramer {
    /// A head once CRLFCRLF is in; 1xx heads are skipped but 101, which is
    /// passed on: the exchange takes it for a handshake's answer, or refuses it.
    /// What follows a 101 is not HTTP: it stays unframed (``takeUnparsed()``).
    mutating func nextHead(_ bytes: inout ByteBuffer, scanFrom: Int) throws(HTTP1FramingError) -> Event? {
        let length: Int
        switch bytes.withUnsafeReadableBytes({ HTTP1HeadLines.scanHead($0, from: scanFrom) }) {
        case .complete(let headLength):
            length = headLength
        case .bareLineFeed:
            return try fail(.malformedHeaderLine)
        case .incomplete:
            guard bytes.readableBytes <= maxHeadBytes else { return try fail(.headTooLarge) }
            state = .head(scanFrom: max(0, bytes.readableBytes - 3))
            return nil
        }
        guard length <= maxHeadBytes else { return try fail(.headTooLarge) }
        let head: HTTP1ResponseHeadParser.Parsed
        do {
            head = try HTTP1ResponseHeadParser.parse(bytes.readSlice(length: length)!)
        } catch {
            return try fail(error)
        }
        switch head.status.code {
        case 101:
            state = .idle
            return .head(Head(status: head.status, fields: head.fields, declaredLength: nil, keepAlive: false, untilClose: true))
        case 100..<200:
            state = .head(scanFrom: 0)
            return try nextHead(&bytes, scanFrom: 0)
        default:
            return startBody(of: head)
        }
    }

    /// The chunked body (``ChunkedBodyDecoder``): chunk data as slices, the
    /// trailer section read and dropped.
    mutating func nextChunked(_ bytes: inout ByteBuffer, _ decoder: ChunkedBodyDecoder) throws(HTTP1FramingError) -> Event? {
        var decoder = decoder
        let event: ChunkedBodyDecoder.Event?
        do {
            event = try decoder.next(&bytes)
        } catch {
            return try fail(.malformedChunk)
        }
        switch event {
        case .data(let slice):
            state = .chunked(decoder)
            return .body(slice)
        case .end:
            return finish()
        case nil:
            state = .chunked(decoder)
            return nil
        }
    }
}
