import GatewayCore
@testable import GatewayListener
import Logging
import NIOCore
import NIOHTTP1
import Testing

/// Observers see the response head as the client gets it: the upstream's
/// fields as they came (still bytes) and the gateway's `Via`, for each to read
/// as much of as it needs.
struct ExchangeInfoObservationTests {
    final class Recording: ExchangeObservation {
        var heads: [(status: Int, headers: HTTPHeaders)] = []

        func requestBodyPart(_ buffer: ByteBuffer) {}
        func responseHead(status: Int, fields: ResponseFields, via: String?) { heads.append((status, Self.asClientGetsThem(fields, via: via))) }

        /// The fields, then the gateway's `Via`.
        static func asClientGetsThem(_ fields: ResponseFields, via: String?) -> HTTPHeaders {
            var headers = fields.headers
            if let via { headers.add(name: "Via", value: via) }
            return headers
        }
        func finish(_ outcome: ExchangeOutcome) {}
    }

    private func info(_ observations: [any ExchangeObservation]) -> ExchangeInfo {
        let context = RequestContext(id: "t1", clientAddress: "127.0.0.1:1", logger: Logger(label: "test"))
        return ExchangeInfo(
            method: .GET, version: .http1_1, uri: "http://example.com/", expectsContinue: false,
            context: context, observations: ExchangeObservations(observations)
        )
    }

    private let upstreamFields: HTTPHeaders = ["Content-Type": "text/plain", "Content-Length": "2"]

    @Test func everyObserverGetsTheFieldsAndTheGatewaysVia() {
        let first = Recording()
        let second = Recording()
        info([first, second]).observeResponseHead(status: .ok, fields: ResponseFields(upstreamFields), via: "1.1 gateway")
        for observer in [first, second] {
            #expect(observer.heads.count == 1)
            #expect(observer.heads.first?.status == 200)
            #expect(observer.heads.first?.headers["Content-Type"] == ["text/plain"])
            #expect(observer.heads.first?.headers["Via"] == ["1.1 gateway"])
        }
    }

    /// The first observation is kept inline, the rest in an array: every one
    /// is seen once, in order, whatever their number.
    @Test(arguments: [0, 1, 2, 5])
    func observationsRunInTheirOrder(_ count: Int) {
        let recordings = (0..<count).map { _ in Recording() }
        let observations = ExchangeObservations(recordings)
        #expect(Array(observations).count == count)
        #expect(observations.map { ObjectIdentifier($0) } == recordings.map { ObjectIdentifier($0) })
        var appended: ExchangeObservations = []
        for recording in recordings { appended.append(recording) }
        #expect(appended.map { ObjectIdentifier($0) } == recordings.map { ObjectIdentifier($0) })
    }

    @Test func fieldsKeptAsLinesAreDetachedFromTheReadBuffer() {
        var read = ByteBuffer(string: "HTTP/1.1 200 OK\r\nServer: origin\r\nConnection: close\r\nX-A: b\r\n")
        read.moveReaderIndex(forwardBy: "HTTP/1.1 200 OK\r\n".utf8.count)
        let lines = ResponseFields(lines: read, dropped: 0b10)
        let detached = lines.detached()
        guard case .lines(let copy, let dropped) = detached.storage else {
            Issue.record("lines stay lines")
            return
        }
        #expect(dropped == 0b10)
        #expect(copy.readableBytes == read.readableBytes)
        let copied = copy.withUnsafeReadableBytes { $0.baseAddress } != read.withUnsafeReadableBytes { $0.baseAddress }
        #expect(copied, "a copy, not a slice of the read buffer")
        #expect(Recording.asClientGetsThem(detached, via: "1.1 gateway") == ["Server": "origin", "X-A": "b", "Via": "1.1 gateway"])
    }
}
