import GatewayCore
import Logging
import NIOCore
import NIOHTTP1

/// What an exchange knows of its request, for the response, the log line and
/// observers. One object per exchange, shared by the client side (for the
/// answers it writes itself) and the ``Exchange``: a struct was copied into
/// both, a retain and a release per field each time.
final class ExchangeInfo {
    let method: HTTPMethod
    let version: HTTPVersion
    let uri: String
    let expectsContinue: Bool
    /// When the exchange began: its context's.
    var started: ContinuousClock.Instant { context.startedAt }
    let context: RequestContext
    var observations: ExchangeObservations

    /// This request's logger (`request=<id>` on each line), built when read: read it where a line is logged.
    var logger: Logger { context.logger }
    /// Whether the exchange's info line is logged, read in place.
    var logsExchangeLine: Bool { context.logsExchangeLine }

    init(
        method: HTTPMethod, version: HTTPVersion, uri: String, expectsContinue: Bool, context: RequestContext,
        observations: ExchangeObservations
    ) {
        self.method = method
        self.version = version
        self.uri = uri
        self.expectsContinue = expectsContinue
        self.context = context
        self.observations = observations
    }

    func observeRequestBody(_ buffer: ByteBuffer) {
        for observation in observations { observation.requestBodyPart(buffer) }
    }

    /// Observers see the fields as the upstream sent them (still bytes: each
    /// reads what it needs) and the `via` the gateway adds after them.
    func observeResponseHead(status: HTTPResponseStatus, fields: ResponseFields, via: String?) {
        for observation in observations { observation.responseHead(status: Int(status.code), fields: fields, via: via) }
    }

    func finish(_ outcome: ExchangeOutcome) {
        for observation in observations { observation.finish(outcome) }
    }
}
