public import Logging

/// Per-exchange context handed through the policy chain to the upstream pool.
public struct RequestContext: Sendable {
    /// A short unique id for logs and traces.
    public let id: String
    /// The client's address as `ip:port`.
    public let clientAddress: String
    public let startedAt: ContinuousClock.Instant
    public var logger: Logger
    /// Attempts and timings, recorded as the exchange proceeds.
    public let record: ExchangeRecord

    public init(id: String, clientAddress: String, startedAt: ContinuousClock.Instant = .now, logger: Logger, record: ExchangeRecord = ExchangeRecord()) {
        self.id = id
        self.clientAddress = clientAddress
        self.startedAt = startedAt
        self.logger = logger
        self.record = record
    }
}
