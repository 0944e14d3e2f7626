import GatewayCore
import NIOConcurrencyHelpers
import NIOCore

/// Passes a response body through and records the exchange once, when the body
/// ends (the status the client saw), fails (`error` with the failure's code),
/// or is cancelled (the client went away, or the body was discarded: the status
/// the client saw, up to that moment).
final class ObservingBodySource: BodySource {
    private let inner: any BodySource
    private let exchange: NIOLockedValueBox<PendingExchange?>

    init(_ inner: any BodySource, exchange: PendingExchange) {
        self.inner = inner
        self.exchange = NIOLockedValueBox(exchange)
    }

    func next() async throws -> ByteBuffer? {
        do {
            let chunk = try await inner.next()
            if chunk == nil { finish(errorCode: nil) }
            return chunk
        } catch {
            finish(errorCode: (error as? GatewayError)?.code ?? .connectionReset)
            throw error
        }
    }

    func nextIfReady() throws -> ReadyChunk {
        do {
            let ready = try inner.nextIfReady()
            if case .end = ready { finish(errorCode: nil) }
            return ready
        } catch {
            finish(errorCode: (error as? GatewayError)?.code ?? .connectionReset)
            throw error
        }
    }

    func cancel() {
        inner.cancel()
        finish(errorCode: nil)
    }

    private func finish(errorCode: GatewayError.Code?) {
        guard let pending = exchange.withLockedValue({ e -> PendingExchange? in
            defer { e = nil }
            return e
        }) else { return }
        pending.finish(errorCode: errorCode)
    }

    deinit {
        // Dropped without being read to the end nor cancelled: record what is known.
        finish(errorCode: nil)
    }
}
