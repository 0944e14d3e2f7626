import GatewayCore
import Logging

/// What every client connection of a listener shares.
struct ClientConnectionEnvironment: Sendable {
    let liveConfig: LiveConfig
    let tracker: ConnectionTracker
    let logger: Logger
    /// `logger`'s sink for exchange lines as values (nil unless its handler is
    /// the gateway's own): found here, once per listener, for every request's context.
    let exchangeLines: ExchangeLineSink?
    let requestIDs: RequestIDGenerator
    let maxHeadBytes: Int
    /// The gateway's own listeners: a `CONNECT` that reaches one is refused.
    var ownListeners: OwnListeners
    /// Where responses' flushes wait for the end of their loop's tick
    /// (``LoopFlushBatch``); nil: each flushes at once (a test's embedded loop).
    let flushBatches: LoopFlushBatches?

    init(
        liveConfig: LiveConfig, tracker: ConnectionTracker, logger: Logger, requestIDs: RequestIDGenerator, maxHeadBytes: Int,
        ownListeners: OwnListeners = OwnListeners(), flushBatches: LoopFlushBatches? = nil
    ) {
        self.liveConfig = liveConfig
        self.tracker = tracker
        self.logger = logger
        self.exchangeLines = ExchangeLineSink(logger)
        self.requestIDs = requestIDs
        self.maxHeadBytes = maxHeadBytes
        self.ownListeners = ownListeners
        self.flushBatches = flushBatches
    }
}

extension ClientConnectionEnvironment {
    /// The context of a request that starts now from `clientAddress`: a new
    /// request id; its lines carry `request=<id>` (the tagged logger is only
    /// built where one is logged).
    func requestContext(clientAddress: String) -> RequestContext {
        RequestContext(
            id: requestIDs.next(), clientAddress: clientAddress, startedAt: ContinuousClock.now, logger: logger,
            exchangeLines: exchangeLines, tagsLinesWithID: true
        )
    }
}
