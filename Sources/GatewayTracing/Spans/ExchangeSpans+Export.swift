import GatewayCore

extension ExchangeSpans {
    /// The exchange's spans encoded as ``SpanPlan`` says them: each span's
    /// ids and start from the exchange, then the fields the request said of
    /// it (``Subject``), its instants as wall-clock times.
    struct ExportSink: SpanSink {
        let writer: OTLPSpanWriter
        let ids: IDs
        let subject: Subject
        /// The SERVER span's start.
        let started: StoredInstant
        let clients: SmallList<Client>
        let clock: WallClock

        mutating func beginServer() {
            writer.begin(
                .server, name: subject.name, trace: ids.trace, span: ids.span, parent: ids.parent, traceState: ids.traceState ?? "",
                start: clock.timestamp(started)
            )
            subject.fields.withUnsafeBytes { writer.fields(UnsafeRawBufferPointer(rebasing: $0[..<subject.clientFieldsStart])) }
        }

        mutating func beginClient(_ index: Int) {
            let client = clients[index]
            writer.begin(
                .client, name: subject.name, trace: ids.trace, span: client.span, parent: ids.span, traceState: ids.traceState ?? "",
                start: clock.timestamp(client.started)
            )
            subject.fields.withUnsafeBytes { writer.fields(UnsafeRawBufferPointer(rebasing: $0[subject.clientFieldsStart...])) }
        }

        mutating func attribute(_ key: String, _ value: SpanAttribute) {
            writer.attribute(key, value)
        }

        mutating func urlAttribute(_ key: String, _ url: URLPieces) {
            writer.urlAttribute(key, url)
        }

        mutating func attribute(_ key: String, _ value: Substring) {
            writer.attribute(key, value)
        }

        mutating func event(_ event: SpanPlan.Event) {
            writer.event(event.name, time: clock.timestamp(event.at), attributes: event.attributes)
        }

        mutating func status(_ status: SpanStatus) {
            writer.status(status)
        }

        mutating func end(at instant: StoredInstant) {
            writer.end(time: clock.timestamp(instant))
        }
    }
}
