import NIOCore
import NIOPosix

/// The buffer each thread writes its exchanges' spans into
/// (``OTLPSpanWriter``) before they are copied into the export queue, kept
/// from one exchange to the next: encoding a finished exchange's spans
/// allocates nothing once the thread's buffer has grown to its spans' size.
/// One per thread (an event loop finishes its exchanges one at a time), so no lock.
enum SpanScratch {
    /// A buffer a very large span grew beyond this is let go, not kept for the thread.
    static let keptCapacity = 64 * 1024
    /// What a thread's first buffer starts with: the spans of a retried exchange.
    static let initialCapacity = 4 * 1024

    private static let buffers = ThreadSpecificVariable<ScratchBuffer>()

    /// This thread's buffer, empty (a new one if the thread has none, or it is already taken).
    static func take() -> ByteBuffer {
        var buffer = ByteBuffer()
        if let kept = buffers.currentValue { swap(&buffer, &kept.buffer) }
        if buffer.capacity == 0 {
            buffer.reserveCapacity(initialCapacity)
        } else {
            // Only the thread's variable held it: cleared in place.
            buffer.clear()
        }
        return buffer
    }

    /// Gives `buffer` back for the thread's next exchange (once the queue has copied its bytes).
    static func recycle(_ buffer: ByteBuffer) {
        guard buffer.capacity <= keptCapacity else { return }
        if let kept = buffers.currentValue {
            kept.buffer = buffer
        } else {
            buffers.currentValue = ScratchBuffer(buffer)
        }
    }
}

/// One thread's span buffer (``SpanScratch``). Only ever used by the thread
/// that holds it: a thread-specific variable's value is never handed to
/// another thread, and the buffer is taken out and put back by that thread
/// alone. Hence unchecked (a `static let` of the variable must be `Sendable`).
final class ScratchBuffer: @unchecked Sendable {
    var buffer: ByteBuffer

    init(_ buffer: ByteBuffer) {
        self.buffer = buffer
    }
}
