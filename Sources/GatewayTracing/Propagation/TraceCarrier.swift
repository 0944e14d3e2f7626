import GatewayCore

/// The two W3C Trace Context fields of a request: what the gateway reads of
/// an incoming request's trace and writes for the next hop, never a
/// request's other headers (they hold credentials).
struct TraceCarrier: Sendable, Equatable {
    var traceparent: String?
    var tracestate: String?

    init(traceparent: String? = nil, tracestate: String? = nil) {
        self.traceparent = traceparent
        self.tracestate = tracestate
    }

    /// The trace context a request came with, checked: its one valid
    /// `traceparent` (as version `00`), and its `tracestate` when that is valid
    /// too (an invalid one is dropped, the parent kept, as the specification
    /// says). Nil when the request starts a trace.
    static func incoming(_ headers: RequestFields) -> TraceCarrier? {
        guard let context = incomingContext(headers) else { return nil }
        return TraceCarrier(traceparent: context.parent.headerValue, tracestate: context.tracestate)
    }

    /// Whether `headers` have a `traceparent` or `tracestate` field: one pass
    /// over their names (most requests have neither; then nothing more is read).
    static func mayBeIn(_ headers: RequestFields) -> Bool {
        headers.containsName(where: isTraceField)
    }

    /// `traceparent` or `tracestate`, in any case.
    static func isTraceField(_ name: UnsafeRawBufferPointer) -> Bool {
        switch name.count {
        case 11: RequestFields.equalsIgnoringCase(name, "traceparent")
        case 10: RequestFields.equalsIgnoringCase(name, "tracestate")
        default: false
        }
    }

    /// ``incoming(_:)`` as read: the parent parsed (not written out to be read again).
    static func incomingContext(_ headers: RequestFields) -> (parent: TraceParent, tracestate: String?)? {
        guard let parent = TraceParent(headers: headers) else { return nil }
        guard let state = TraceParent.traceState(in: headers) else { return (parent, nil) }
        return (parent, TraceState.isValid(state) ? state : nil)
    }

    /// Writes the context into `headers` for the next hop: `traceparent`
    /// replaced, `tracestate` replaced or removed (one from the client that
    /// the context does not carry would belong to another trace).
    func write(to headers: inout RequestFields) {
        write(to: &headers, replacing: true)
    }

    /// ``write(to:)``; `replacing` false: `headers` are known to hold neither
    /// field (``mayBeIn(_:)`` said no, and none was written since), so none
    /// is looked for.
    func write(to headers: inout RequestFields, replacing: Bool) {
        guard let traceparent else { return }
        // Both looked for in one pass over the fields (a removal that finds none changes nothing).
        if replacing { headers.removeAll(where: Self.isTraceField) }
        headers.add(name: "traceparent", value: traceparent)
        if let tracestate { headers.add(name: "tracestate", value: tracestate) }
    }
}
