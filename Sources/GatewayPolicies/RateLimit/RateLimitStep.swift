import GatewayConfig
public import GatewayCore
import NIOCore
import NIOHTTP1

/// The rate-limit policy on the event loop, for one upstream: the same rules
/// as ``RateLimitPolicy`` (upstream holds per `host:port` within `max_wait`,
/// then the local token bucket with its bounded FIFO queue), decided
/// synchronously on the event loop. A request waits only when it must: during
/// an upstream's pause (a scheduled task, then the step runs again) or for its
/// turn in a full bucket's queue (a promise the limiter fulfils).
struct RateLimitStep: AttemptStep {
    /// The upstream's policy: its settings and its limiter, resolved when the route was built.
    let policy: RateLimitPolicy

    func prepare(_ request: inout ProxyRequest, context: RequestContext, on eventLoop: any EventLoop) -> AttemptStepDecision {
        let registry = policy.registry
        let config = policy.config
        let upstream = policy.upstream
        if config.honorUpstream, let until = registry.hold(authority: request.hostPort, now: policy.clock.now) {
            let wait = until - policy.clock.now
            // A hold beyond max_wait (kept from before a reload that lowered it) is not waited for.
            if wait <= config.maxWait {
                guard registry.queueDepth(upstream: upstream) < config.maxQueue else {
                    return .respond(policy.refuse(authority: request.hostPort, wait: wait, why: "the upstream asked for a pause until its rate limit resets"))
                }
                return .wait(pause(wait, on: eventLoop))
            }
        }
        guard let limiter = policy.limiter(for: request) else { return .proceed }
        switch limiter.admit(on: eventLoop) {
        case .admitted:
            return .proceed
        case .rejected(let retryAfter):
            context.logger.debug("local rate limit", metadata: ["upstream": "\(upstream)", "retry_after": "\(retryAfter)"])
            return .respond(policy.refuse(authority: request.hostPort, wait: retryAfter, why: "the gateway's rate limit for this upstream is exhausted"))
        case .queued(let granted, let cancel):
            return .wait(AttemptWait(future: granted, repeatStep: false, cancel: cancel))
        case .unavailable(var error):
            error.upstream = request.hostPort
            return .respond(error.response())
        }
    }

    /// Waits out an upstream's pause (counted in the upstream's queue depth).
    private func pause(_ wait: Duration, on eventLoop: any EventLoop) -> AttemptWait {
        let registry = policy.registry
        let events = policy.events
        let upstream = policy.upstream
        registry.adjustDepth(upstream: upstream, by: 1, events: events)
        let scheduled = eventLoop.scheduleTask(in: TimeAmount(wait)) {}
        scheduled.futureResult.whenComplete { _ in registry.adjustDepth(upstream: upstream, by: -1, events: events) }
        return AttemptWait(future: scheduled.futureResult, repeatStep: true, cancel: { scheduled.cancel() })
    }

    func responseHead(_ head: UpstreamResponseHead, of request: ProxyRequest, context: RequestContext, mayReplay: Bool, on eventLoop: any EventLoop) -> AttemptResponseVerdict {
        guard policy.config.honorUpstream else { return .accept }
        let status = head.status.code
        guard status == 429 || status == 503 || head.fields.containsName(where: Self.isRateLimitName) else { return .accept }
        policy.observe(status: head.status, headers: head.headers, authority: request.hostPort, logger: context.logger)
        return .accept
    }
}

extension RateLimitPolicy {
    /// The exchange's step: the same settings and limiter, decided on the event loop.
    public var step: any AttemptStep { RateLimitStep(policy: self) }
}

extension RateLimitStep {
    /// Whether a field name is `RateLimit`, `RateLimit-*` or `X-RateLimit-*`
    /// (checked on the name's bytes: most responses have none, and most names
    /// are turned away by their first byte).
    static func isRateLimitName(_ name: UnsafeRawBufferPointer) -> Bool {
        guard let first = name.first else { return false }
        var start = 0
        switch first | 0x20 {
        case UInt8(ascii: "r"):
            break
        case UInt8(ascii: "x"):
            guard name.count >= 2, name[1] == UInt8(ascii: "-") else { return false }
            start = 2
        default:
            return false
        }
        guard name.count - start >= 9 else { return false }
        let expected: StaticString = "ratelimit"
        return expected.withUTF8Buffer { expected in
            for i in 0..<9 where name[start + i] | 0x20 != expected[i] { return false }
            return true
        }
    }
}
