import GatewayCore
import NIOConcurrencyHelpers
import NIOCore

/// Passes a response body through, counting its bytes, and calls `done` exactly
/// once: when the body ends (no error), fails (the failure's code), or is
/// cancelled or dropped unread (the client went away, or the body was
/// discarded: no error, the bytes up to that moment). Metrics record the
/// exchange there, traces write their record.
final class ObservingBodySource: BodySource {
    typealias Done = @Sendable (_ bytes: Int, _ errorCode: GatewayError.Code?) -> Void

    private let inner: any BodySource
    private let state: NIOLockedValueBox<(bytes: Int, done: Done?)>

    init(_ inner: any BodySource, done: @escaping Done) {
        self.inner = inner
        self.state = NIOLockedValueBox((0, done))
    }

    func next() async throws -> ByteBuffer? {
        do {
            let chunk = try await inner.next()
            if let chunk {
                state.withLockedValue { $0.bytes += chunk.readableBytes }
            } else {
                finish(errorCode: nil)
            }
            return chunk
        } catch {
            finish(errorCode: Self.code(of: error))
            throw error
        }
    }

    func nextIfReady() throws -> ReadyChunk {
        do {
            let ready = try inner.nextIfReady()
            switch ready {
            case .chunk(let chunk): state.withLockedValue { $0.bytes += chunk.readableBytes }
            case .end: finish(errorCode: nil)
            case .notReady: break
            }
            return ready
        } catch {
            finish(errorCode: Self.code(of: error))
            throw error
        }
    }

    func cancel() {
        inner.cancel()
        finish(errorCode: nil)
    }

    private static func code(of error: any Error) -> GatewayError.Code {
        (error as? GatewayError)?.code ?? .connectionReset
    }

    private func finish(errorCode: GatewayError.Code?) {
        let (bytes, done) = state.withLockedValue { s -> (Int, Done?) in
            defer { s.done = nil }
            return (s.bytes, s.done)
        }
        done?(bytes, errorCode)
    }

    deinit {
        // Dropped without being read to the end nor cancelled: report what is known.
        finish(errorCode: nil)
    }
}
