import NIOCore
import NIOPosix

extension ExchangeSpans {
    /// The exchange's spans encoded as ``SpanPlan`` says them: each span's
    /// ids and start from the exchange, its instants as wall-clock times.
    struct ExportSink: SpanSink {
        var writer: OTLPSpanWriter
        let ids: IDs
        /// Both spans' name (`GET /users/{id}`).
        let name: String
        /// The SERVER span's start.
        let started: ContinuousClock.Instant
        let clients: [Client]
        let clock: WallClock

        mutating func beginServer() {
            writer.begin(
                .server, name: name, trace: ids.trace, span: ids.span, parent: ids.parent, traceState: ids.traceState ?? "",
                start: clock.timestamp(started)
            )
        }

        mutating func beginClient(_ index: Int) {
            let client = clients[index]
            writer.begin(
                .client, name: name, trace: ids.trace, span: client.span, parent: ids.span, traceState: ids.traceState ?? "",
                start: clock.timestamp(client.start)
            )
        }

        mutating func attribute(_ key: String, _ value: SpanAttribute) {
            writer.attribute(key, value)
        }

        mutating func event(_ event: SpanPlan.Event) {
            writer.event(event.name, time: clock.timestamp(event.at), attributes: event.attributes)
        }

        mutating func status(_ status: SpanStatus) {
            writer.status(status)
        }

        mutating func end(at instant: ContinuousClock.Instant) {
            writer.end(time: clock.timestamp(instant))
        }
    }
}

/// The buffer an event loop's exchanges encode their spans into before the
/// export queue copies them: one per thread, kept from one exchange to the
/// next, so that an exchange's end allocates none.
final class SpanScratch: @unchecked Sendable {
    /// Only ever used by the thread that holds it.
    private var buffer: ByteBuffer?

    private static let threads = ThreadSpecificVariable<SpanScratch>()
    /// A new thread's buffer: an exchange's spans take a few hundred bytes.
    private static let capacity = 2048

    /// This thread's buffer, empty; ``keep(_:)`` gives it back.
    static func take() -> ByteBuffer {
        let scratch = current()
        guard var buffer = scratch.buffer else { return ByteBufferAllocator().buffer(capacity: capacity) }
        scratch.buffer = nil
        // Unique again: the exchange that used it last let go of it.
        buffer.clear()
        return buffer
    }

    /// `buffer` kept for this thread's next exchange.
    static func keep(_ buffer: ByteBuffer) {
        current().buffer = buffer
    }

    private static func current() -> SpanScratch {
        if let scratch = threads.currentValue { return scratch }
        let scratch = SpanScratch()
        threads.currentValue = scratch
        return scratch
    }
}
