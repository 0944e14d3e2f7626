import GatewayCore
import NIOCore

/// Graceful shutdown, as ``ConnectionTracker`` asks each connection on its loop.
extension ClientConnectionHandler {
    /// Draining began: an idle connection closes now; a busy one after its exchange (see `exchangeDone`).
    func drainRequested() {
        guard let context, machine.isIdle, exchange == nil else { return }
        machine.closeAfterWrite()
        close(context)  // after the last response, which may wait for the end of the tick
    }

    /// A connection cap was reached and this connection, idle longest, is
    /// closed to admit a new one (``ConnectionTracker``); a request that
    /// arrived meanwhile is answered first, then it closes.
    func evictRequested() {
        evicted = true
        drainRequested()
    }

    /// The drain timeout passed with this connection busy: a request still
    /// waiting for its response gets 503 `shutting_down`; anything else closes.
    func drainTimedOut() {
        guard let context else { return }
        guard !machine.isIdle, !machine.responseStarted, let current else {
            close(context)
            return
        }
        cancelExchange()
        let error = GatewayError(.shuttingDown, "the gateway is shutting down and this request did not finish within limits.drain_timeout")
        ExchangeLogLine.log(
            current.context, method: current.method, target: .uri(current.uri), status: 503, started: current.started,
            bytesIn: 0, bytesOut: 0, upstream: nil, error: error.code
        )
        current.finish(ExchangeOutcome(status: 503, responseBytes: 0, error: error.code))
        machine.closeAfterWrite()
        writeFinal(error.response(), method: current.method, version: current.version)
    }
}
