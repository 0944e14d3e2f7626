import GatewayCore
@testable import GatewayListener
import Testing

/// A pooled connection the server closed as the request went (a keep-alive
/// race): the request goes once more on a new connection when it has no body
/// and may be repeated, whatever the retry policy; never twice, never a POST.
struct ExchangeStateMachineStaleTests {
    typealias Machine = ExchangeStateMachine

    static var stale: GatewayError {
        var error = GatewayError(.connectionReset, "the upstream closed the connection before the response head")
        error.staleConnection = true
        return error
    }

    static func attempting(idempotent: Bool, idempotencyKey: Bool = false, bodyless: Bool = true) -> Machine {
        var machine = Machine()
        _ = machine.start(
            retry: nil, stepReplayLimit: nil, declaredLength: bodyless ? 0 : 10, bodyless: bodyless,
            idempotent: idempotent, idempotencyKey: idempotencyKey
        )
        machine.attemptStarted()
        return machine
    }

    static func noPlanner(_ error: GatewayError, _ run: inout RetryRun) -> Duration? { nil }

    @Test func aGETOnAStaleConnectionGoesOnceMoreAtOnceWithoutARetryPolicy() {
        var machine = Self.attempting(idempotent: true)
        #expect(machine.upstreamFailed(Self.stale, retryDelay: Self.noPlanner) == .runAttempt(from: .routed))
        machine.attemptStarted()
        #expect(machine.upstreamFailed(Self.stale, retryDelay: Self.noPlanner) == .fail(Self.stale), "once per request")
    }

    @Test func aRequestThatMayNotBeRepeatedIsNotSentAgain() {
        var machine = Self.attempting(idempotent: false)
        #expect(machine.upstreamFailed(Self.stale, retryDelay: Self.noPlanner) == .fail(Self.stale))
    }

    @Test func aNonIdempotentRequestWithAnIdempotencyKeyGoesOnceMore() {
        var machine = Self.attempting(idempotent: false, idempotencyKey: true)
        #expect(machine.upstreamFailed(Self.stale, retryDelay: Self.noPlanner) == .runAttempt(from: .routed))
    }

    @Test func aRequestWithABodyIsLeftToTheRetryPolicy() {
        var machine = Self.attempting(idempotent: true, bodyless: false)
        #expect(machine.upstreamFailed(Self.stale, retryDelay: Self.noPlanner) == .fail(Self.stale))
    }

    @Test func aFailureOnAFreshConnectionIsNotStale() {
        var machine = Self.attempting(idempotent: true)
        let reset = GatewayError(.connectionReset, "reset by the upstream")
        #expect(machine.upstreamFailed(reset, retryDelay: Self.noPlanner) == .fail(reset))
    }
}
