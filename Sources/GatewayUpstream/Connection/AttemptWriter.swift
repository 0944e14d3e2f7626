import GatewayCore
import NIOCore

/// The request side of one attempt, handed to its delegate: calls for an
/// attempt that has ended are refused (they cannot reach the next one), as
/// the handler's state machine checks the attempt id each carries. A value
/// (a reference and an id): handing it over allocates nothing.
struct AttemptWriter: UpstreamRequestWriter {
    private let handler: UpstreamAttemptHandler
    private let attemptID: Int

    init(handler: UpstreamAttemptHandler, attemptID: Int) {
        self.handler = handler
        self.attemptID = attemptID
    }

    func writeBodyPart(_ chunk: ByteBuffer, isLast: Bool) -> EventLoopFuture<Void> {
        handler.writeBodyPart(chunk, isLast: isLast, attemptID: attemptID)
    }

    func endRequest() -> EventLoopFuture<Void> {
        handler.endRequest(attemptID: attemptID)
    }

    func abort(_ error: any Error) {
        handler.abort(attemptID: attemptID, error: error)
    }

    func resumeReading() {
        handler.consumerDemand(attemptID: attemptID)
    }
}
