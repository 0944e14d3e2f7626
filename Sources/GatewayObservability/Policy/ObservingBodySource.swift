import GatewayCore
import NIOConcurrencyHelpers
import NIOCore

/// Passes a response body through and calls `done` exactly once: when the body
/// ends (no error), fails (the failure's code), or is cancelled or dropped
/// unread (the client went away, or the body was discarded: no error, the bytes
/// up to that moment). Metrics record the exchange there, traces write their
/// record. Bytes are counted only with `countingBytes` (traces): counting takes
/// the lock once per chunk, which metrics do not need.
final class ObservingBodySource: BodySource {
    typealias Done = @Sendable (_ bytes: Int, _ errorCode: GatewayError.Code?) -> Void

    private let inner: any BodySource
    private let countingBytes: Bool
    private let state: NIOLockedValueBox<(bytes: Int, done: Done?)>

    init(_ inner: any BodySource, countingBytes: Bool = false, done: @escaping Done) {
        self.inner = inner
        self.countingBytes = countingBytes
        self.state = NIOLockedValueBox((0, done))
    }

    private func count(_ chunk: ByteBuffer) {
        guard countingBytes else { return }
        state.withLockedValue { $0.bytes += chunk.readableBytes }
    }

    func next() async throws -> ByteBuffer? {
        do {
            let chunk = try await inner.next()
            if let chunk {
                count(chunk)
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
            case .chunk(let chunk): count(chunk)
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
