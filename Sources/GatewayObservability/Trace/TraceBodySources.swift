import GatewayCore
import NIOConcurrencyHelpers
import NIOCore

/// The request body bytes a trace shows; nil while unknown or when not captured.
final class BodyCapture: Sendable {
    private let state = NIOLockedValueBox((bytes: [UInt8]?.none, overflow: false))

    func set(_ bytes: [UInt8]) { state.withLockedValue { $0.bytes = bytes } }

    /// Appends a chunk while teeing; drops everything past `limit`.
    func append(_ chunk: ByteBuffer, limit: Int) {
        state.withLockedValue { s in
            guard !s.overflow else { return }
            if (s.bytes?.count ?? 0) + chunk.readableBytes > limit {
                s.overflow = true
                s.bytes = nil
                return
            }
            // In place: taking a copy out of the box would copy all captured bytes per chunk.
            if s.bytes == nil { s.bytes = [] }
            s.bytes!.append(contentsOf: chunk.readableBytesView)
        }
    }

    /// Marks a teed body complete (an empty stream becomes `[]`).
    func complete() { state.withLockedValue { s in if !s.overflow && s.bytes == nil { s.bytes = [] } } }

    var bytes: [UInt8]? { state.withLockedValue { $0.overflow ? nil : $0.bytes } }
}

/// Passes a streamed request body on, keeping a copy (bounded) for the trace.
final class TeeBodySource: BodySource {
    private let inner: any BodySource
    private let capture: BodyCapture
    private let limit: Int

    init(_ inner: any BodySource, capture: BodyCapture, limit: Int) {
        self.inner = inner
        self.capture = capture
        self.limit = limit
    }

    func next() async throws -> ByteBuffer? {
        let chunk = try await inner.next()
        if let chunk { capture.append(chunk, limit: limit) } else { capture.complete() }
        return chunk
    }

    func cancel() { inner.cancel() }
}
