/// An exchange's place in a distributed trace (W3C Trace Context), while
/// tracing is on: the tracing observer sets it on the exchange's
/// ``ExchangeRecord`` as the exchange begins. Log lines (`trace_id`,
/// `span_id`), debug trace records and HAR entries (`traceId`) read its ids,
/// so a trace in Jaeger or Tempo leads to the curl line and back; the
/// tracing steps read the rest (their own type behind this protocol).
/// Never set while tracing is off: then nothing reads more than a nil.
/// Its ids never change once it is made: the log writer thread reads them
/// after the exchange (``ExchangeLine``), from any thread.
public protocol ExchangeTraceContext: AnyObject, Sendable {
    /// The trace: 32 lowercase hex digits.
    var traceID: String { get }
    /// The gateway's span of the exchange (its SERVER span): 16 lowercase hex digits.
    var spanID: String { get }
}
