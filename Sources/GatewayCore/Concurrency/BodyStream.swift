import NIOConcurrencyHelpers
public import NIOCore

/// The one bridge between an event loop and async code for a body: a channel
/// handler (the producer) yields chunks, a task (the consumer) reads them with
/// `next()`, with back-pressure: the handler asks `shouldPauseReading()` before
/// each socket read and holds the read while `highWatermark` bytes wait here;
/// the consumer's `next()` calls `onDemand` once it has drained below
/// `lowWatermark`, which lets the handler read again. Memory per body stays
/// around the high watermark plus one socket read, whatever the body size.
///
/// Used for upstream response bodies read by a policy that must wait (retry,
/// OAuth2) and for client request bodies sent through such policies; the
/// exchange passes parts between channels without it.
public final class BodyStream: BodySource {
    private struct State {
        var buffer = CircularBuffer<ByteBuffer>()
        var bufferedBytes = 0
        /// The upstream sent the whole body.
        var finished = false
        var failure: (any Error)?
        /// The consumer gave up (`cancel()` or task cancellation).
        var cancelled = false
        var waiter: CheckedContinuation<ByteBuffer?, any Error>?
        /// The handler holds a read until the consumer drains below the low watermark.
        var readPaused = false
    }

    private enum NextStep {
        case chunk(ByteBuffer, signalDemand: Bool)
        case end
        case fail(any Error)
        case suspend(signalDemand: Bool)
    }

    public static let defaultHighWatermark = 256 * 1024
    public static let defaultLowWatermark = 64 * 1024

    private let state = NIOLockedValueBox(State())
    private let highWatermark: Int
    private let lowWatermark: Int
    private let onDemand: @Sendable () -> Void
    private let onCancel: @Sendable () -> Void

    /// - Parameters:
    ///   - onDemand: called (from any thread) when a paused producer may read again.
    ///   - onCancel: called (from any thread, at most once) when the consumer gives up before the end.
    public init(
        highWatermark: Int = BodyStream.defaultHighWatermark,
        lowWatermark: Int = BodyStream.defaultLowWatermark,
        onDemand: @escaping @Sendable () -> Void,
        onCancel: @escaping @Sendable () -> Void
    ) {
        self.highWatermark = highWatermark
        self.lowWatermark = min(lowWatermark, highWatermark)
        self.onDemand = onDemand
        self.onCancel = onCancel
    }

    // MARK: Producer side (the connection's event loop)

    public func yield(_ chunk: ByteBuffer) {
        let waiter: CheckedContinuation<ByteBuffer?, any Error>? = state.withLockedValue { s in
            guard !s.finished, s.failure == nil, !s.cancelled else { return nil }
            if let waiter = s.waiter {
                s.waiter = nil
                return waiter
            }
            s.buffer.append(chunk)
            s.bufferedBytes += chunk.readableBytes
            return nil
        }
        waiter?.resume(returning: chunk)
    }

    /// The upstream sent the whole body. Returns false if the consumer had already given up.
    @discardableResult
    public func finish() -> Bool {
        let (waiter, consumerActive): (CheckedContinuation<ByteBuffer?, any Error>?, Bool) = state.withLockedValue { s in
            guard !s.cancelled, s.failure == nil, !s.finished else { return (nil, false) }
            s.finished = true
            let waiter = s.waiter
            s.waiter = nil
            return (waiter, true)
        }
        waiter?.resume(returning: nil)
        return consumerActive
    }

    /// The body was cut short; the consumer gets `error` after the chunks already buffered.
    public func fail(_ error: any Error) {
        let waiter: CheckedContinuation<ByteBuffer?, any Error>? = state.withLockedValue { s in
            guard !s.finished, s.failure == nil, !s.cancelled else { return nil }
            s.failure = error
            let waiter = s.waiter
            s.waiter = nil
            return waiter
        }
        waiter?.resume(throwing: error)
    }

    /// Whether the producer should hold its next read; if so, `onDemand` will be called later.
    public func shouldPauseReading() -> Bool {
        state.withLockedValue { s in
            guard s.bufferedBytes >= highWatermark, s.waiter == nil, !s.cancelled else { return false }
            s.readPaused = true
            return true
        }
    }

    public var bufferedBytes: Int { state.withLockedValue { $0.bufferedBytes } }

    public var isCancelled: Bool { state.withLockedValue { $0.cancelled } }

    // MARK: Consumer side

    public func next() async throws -> ByteBuffer? {
        switch takeBuffered() {
        case .chunk(let chunk, let signal):
            if signal { onDemand() }
            return chunk
        case .end:
            return nil
        case .fail(let error):
            throw error
        case .suspend:
            break
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ByteBuffer?, any Error>) in
                let step: NextStep = state.withLockedValue { s in
                    if let step = Self.step(&s, lowWatermark: lowWatermark) { return step }
                    s.waiter = continuation
                    let signal = s.readPaused
                    s.readPaused = false
                    return .suspend(signalDemand: signal)
                }
                switch step {
                case .chunk(let chunk, let signal):
                    if signal { onDemand() }
                    continuation.resume(returning: chunk)
                case .end:
                    continuation.resume(returning: nil)
                case .fail(let error):
                    continuation.resume(throwing: error)
                case .suspend(let signal):
                    if signal { onDemand() }
                }
            }
        } onCancel: {
            self.cancel()
        }
    }

    /// The consumer reads no more. Before the end of the body, the connection is closed (`onCancel`).
    public func cancel() {
        let (waiter, closeConnection): (CheckedContinuation<ByteBuffer?, any Error>?, Bool) = state.withLockedValue { s in
            guard !s.cancelled else { return (nil, false) }
            s.cancelled = true
            s.buffer.removeAll()
            s.bufferedBytes = 0
            let waiter = s.waiter
            s.waiter = nil
            return (waiter, !s.finished && s.failure == nil)
        }
        waiter?.resume(throwing: CancellationError())
        if closeConnection { onCancel() }
    }

    private func takeBuffered() -> NextStep {
        state.withLockedValue { s in Self.step(&s, lowWatermark: lowWatermark) ?? .suspend(signalDemand: false) }
    }

    /// What `next()` does without waiting, or nil if it must wait.
    private static func step(_ s: inout State, lowWatermark: Int) -> NextStep? {
        if s.cancelled { return .fail(CancellationError()) }
        if let chunk = s.buffer.popFirst() {
            s.bufferedBytes -= chunk.readableBytes
            var signal = false
            if s.readPaused && s.bufferedBytes < lowWatermark {
                s.readPaused = false
                signal = true
            }
            return .chunk(chunk, signalDemand: signal)
        }
        if let failure = s.failure { return .fail(failure) }
        if s.finished { return .end }
        return nil
    }
}
