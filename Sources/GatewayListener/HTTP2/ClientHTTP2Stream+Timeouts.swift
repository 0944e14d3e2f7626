import GatewayCore
import NIOCore

/// A stream's body and send timeouts, as an HTTP/1.1 exchange has them
/// (``ClientTimeouts``): a request body that stops coming for `body_timeout`
/// is answered 408 `body_timeout`; a response the client does not take
/// (the stream not writable: its flow-control window closed) for
/// `send_timeout` resets the stream. Either way the exchange is cancelled
/// first, so its upstream attempt gives back the upstream connection (or
/// stream) instead of holding it for as long as the client stalls: one client
/// connection's streams could otherwise hold an upstream's whole pool.
///
/// Made when first needed: a bodyless request whose response the client takes
/// as it comes schedules no timer and allocates nothing for it.
extension ClientHTTP2Stream: ClientTimeoutOwner {
    var streamTimeouts: ClientTimeouts {
        if let timeouts { return timeouts }
        let made = ClientTimeouts(limits: ClientTimeoutStateMachine.Limits(environment.liveConfig.current.config.limits))
        timeouts = made
        if !closedOnWire { made.attach(stream: eventLoop, owner: self) }
        return made
    }

    func timedOut(_ error: GatewayError) {
        guard !closedOnWire else { return }
        cancelExchange()
        if machine.timedOut(sendTimeout: error.code == .sendTimeout) == .respond, let info {
            environment.logger.info("refused request: \(error.code.rawValue)", metadata: ["client": "\(clientAddress)"])
            respond(error.response(), info: info, addVia: false, keepAlive: false)
            return
        }
        // Nothing more can reach a client that does not read, or the response began: RST_STREAM.
        environment.logger.info("reset stream: \(error.code.rawValue)", metadata: ["client": "\(clientAddress)"])
        machine.closed()
        reset()
    }

    func flushDeferred() {
        connection.io.flushSoon()
    }
}
