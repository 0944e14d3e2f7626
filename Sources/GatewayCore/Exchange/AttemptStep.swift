public import NIOCore

/// A synchronous step on each upstream attempt of an exchange (rate limit,
/// OAuth2 token, credential injection), called on the client connection's
/// event loop in the order the route lists them. Most calls answer
/// ``AttemptStepDecision/proceed`` at once; a step waits only when it must (an
/// upstream's pause, a full token bucket, a token refresh), by returning a
/// future, as Envoy's filters return `StopIteration`.
public protocol AttemptStep: Sendable {
    /// Prepares `request` for one attempt (adds a credential, takes a token).
    func prepare(_ request: inout ProxyRequest, context: RequestContext, on eventLoop: any EventLoop) -> AttemptStepDecision

    /// The head of the attempt's response, before anyone else sees it
    /// (rate-limit signals, a 401 to the step's token). `mayReplay`: the
    /// request can be sent once more (no step replayed it yet, and it has no
    /// body, or the exchange holds a copy of all of it, or surely will).
    func responseHead(_ head: UpstreamResponseHead, of request: ProxyRequest, context: RequestContext, mayReplay: Bool, on eventLoop: any EventLoop) -> AttemptResponseVerdict

    /// The largest body of `request` the step may want to send again (it may
    /// replay the request), or nil: the exchange then keeps a copy of a body up
    /// to that size as it forwards it.
    func replayLimit(for request: ProxyRequest) -> Int?
}

extension AttemptStep {
    public func responseHead(_ head: UpstreamResponseHead, of request: ProxyRequest, context: RequestContext, mayReplay: Bool, on eventLoop: any EventLoop) -> AttemptResponseVerdict {
        .accept
    }

    public func replayLimit(for request: ProxyRequest) -> Int? { nil }
}

/// What an ``AttemptStep`` decided for one attempt.
public enum AttemptStepDecision: Sendable {
    /// Go on with the next step (or send the attempt).
    case proceed
    /// Answer the client with this response; no attempt is sent (a local 429).
    case respond(ProxyResponse)
    /// Wait, then go on: see ``AttemptWait``.
    case wait(AttemptWait)
}

/// What an ``AttemptStep`` made of a response head.
public enum AttemptResponseVerdict: Sendable {
    /// The response goes on (to the retry planner, then the client).
    case accept
    /// The response is dropped; after the wait (a token refresh) the request
    /// is sent once more, every step running again. A failed wait is the
    /// client's answer (a failed refresh).
    case replay(AttemptWait)
}

/// A change a step makes to the request once its wait is over (the token a refresh obtained).
public typealias AttemptRequestEdit = @Sendable (inout ProxyRequest) -> Void

/// A wait an ``AttemptStep`` asked for: its future completes on the caller's
/// event loop, with an edit of the request or none. With `repeatStep` the same
/// step runs again afterwards (a pause that may have been extended meanwhile);
/// otherwise the step is done (a queue slot was granted, a token obtained).
/// `cancel` withdraws the wait when the client goes away, so that a queue
/// does not keep (and later spend a token on) a request nobody waits for.
public struct AttemptWait: Sendable {
    public let future: EventLoopFuture<AttemptRequestEdit?>
    public let repeatStep: Bool
    public let cancel: @Sendable () -> Void

    /// A wait that changes nothing in the request.
    public init(future: EventLoopFuture<Void>, repeatStep: Bool, cancel: @escaping @Sendable () -> Void) {
        self.future = future.map { nil }
        self.repeatStep = repeatStep
        self.cancel = cancel
    }

    /// A wait whose outcome the request carries (the step is then done).
    public init(editing future: EventLoopFuture<AttemptRequestEdit>, cancel: @escaping @Sendable () -> Void) {
        self.future = future.map { Optional($0) }
        self.repeatStep = false
        self.cancel = cancel
    }

    private init(edits future: EventLoopFuture<AttemptRequestEdit?>, repeatStep: Bool, cancel: @escaping @Sendable () -> Void) {
        self.future = future
        self.repeatStep = repeatStep
        self.cancel = cancel
    }

    /// The same wait, `ended` called (on the wait's event loop) as it ends,
    /// before the exchange sees its outcome: how the tracing steps time the
    /// waits of the steps they wrap.
    public func whenEnded(_ ended: @escaping @Sendable () -> Void) -> AttemptWait {
        AttemptWait(edits: future.always { _ in ended() }, repeatStep: repeatStep, cancel: cancel)
    }
}
