public import NIOCore

/// A synchronous step on each upstream attempt of the direct path (rate limit,
/// credential injection), called on the client connection's event loop in the
/// order the route lists them. Most calls answer ``AttemptStepDecision/proceed``
/// at once; a step waits only when it must (an upstream's pause, a full token
/// bucket), by returning a future, as Envoy's filters return `StopIteration`.
public protocol AttemptStep: Sendable {
    /// Prepares `request` for one attempt (adds a credential, takes a token).
    func prepare(_ request: inout ProxyRequest, context: RequestContext, on eventLoop: any EventLoop) -> AttemptStepDecision

    /// The head of the attempt's response, before anyone else sees it (rate-limit signals).
    func responseHead(_ head: UpstreamResponseHead, of request: ProxyRequest, context: RequestContext)
}

extension AttemptStep {
    public func responseHead(_ head: UpstreamResponseHead, of request: ProxyRequest, context: RequestContext) {}
}

/// What an ``AttemptStep`` decided for one attempt.
public enum AttemptStepDecision {
    /// Go on with the next step (or send the attempt).
    case proceed
    /// Answer the client with this response; no attempt is sent (a local 429).
    case respond(ProxyResponse)
    /// Wait, then go on: see ``AttemptWait``.
    case wait(AttemptWait)
}

/// A wait an ``AttemptStep`` asked for: its future completes on the caller's
/// event loop. With `repeatStep` the same step runs again afterwards (a pause
/// that may have been extended meanwhile); otherwise the step is done (a queue
/// slot was granted). `cancel` withdraws the wait when the client goes away, so
/// that a queue does not keep (and later spend a token on) a request nobody
/// waits for.
public struct AttemptWait {
    public let future: EventLoopFuture<Void>
    public let repeatStep: Bool
    public let cancel: @Sendable () -> Void

    public init(future: EventLoopFuture<Void>, repeatStep: Bool, cancel: @escaping @Sendable () -> Void) {
        self.future = future
        self.repeatStep = repeatStep
        self.cancel = cancel
    }
}
