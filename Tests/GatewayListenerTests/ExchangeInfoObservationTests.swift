import GatewayCore
@testable import GatewayListener
import Logging
import NIOCore
import NIOHTTP1
import Testing

/// Observers see the response head as the client gets it; the copy of its
/// fields with the gateway's `Via` is built only when an observer reads fields.
struct ExchangeInfoObservationTests {
    final class Recording: ExchangeObservation {
        let readsResponseHeaders: Bool
        var heads: [(status: Int, headers: HTTPHeaders)] = []

        init(readsHeaders: Bool) { readsResponseHeaders = readsHeaders }

        func requestBodyPart(_ buffer: ByteBuffer) {}
        func responseHead(status: Int, headers: HTTPHeaders) { heads.append((status, headers)) }
        func finish(_ outcome: ExchangeOutcome) {}
    }

    private func info(_ observations: [any ExchangeObservation]) -> ExchangeInfo {
        let context = RequestContext(id: "t1", clientAddress: "127.0.0.1:1", logger: Logger(label: "test"))
        return ExchangeInfo(
            method: .GET, version: .http1_1, uri: "http://example.com/", expectsContinue: false,
            started: .now, context: context, observations: observations
        )
    }

    private let upstreamFields: HTTPHeaders = ["Content-Type": "text/plain", "Content-Length": "2"]

    @Test func anObserverThatReadsFieldsGetsThemWithTheGatewaysVia() {
        let reader = Recording(readsHeaders: true)
        let counter = Recording(readsHeaders: false)
        info([counter, reader]).observeResponseHead(status: .ok, fields: ResponseFields(upstreamFields), via: "1.1 gateway")
        #expect(reader.heads.count == 1)
        #expect(reader.heads.first?.status == 200)
        #expect(reader.heads.first?.headers["Content-Type"] == ["text/plain"])
        #expect(reader.heads.first?.headers["Via"] == ["1.1 gateway"])
        // Everyone sees the same head: the one copy is shared.
        #expect(counter.heads.first?.headers["Via"] == ["1.1 gateway"])
    }

    @Test func observersThatReadNoFieldsGetTheStatusAndNoCopy() {
        let counter = Recording(readsHeaders: false)
        info([counter]).observeResponseHead(status: .notFound, fields: ResponseFields(upstreamFields), via: "1.1 gateway")
        #expect(counter.heads.count == 1)
        #expect(counter.heads.first?.status == 404)
        #expect(counter.heads.first?.headers.isEmpty == true)
    }
}
