public import GatewayConfig
public import GatewayCore
public import NIOCore

/// Mocks and replay of one upstream: a transport in front of the pool that
/// answers matching requests itself (a mock rule first, then a recorded HAR
/// entry) so that nothing reaches the network, and lets the others go on
/// (`unmatched: pass`) or refuses them with 502 `not_mocked` (`block`). A
/// request whose answer depends on its body (`body_contains`, `{{body.x}}`,
/// `match: [body]`) is held until its body is in (up to 1 MiB); the others
/// are decided on their head, and those no rule could match go straight on.
public final class MockTransport: UpstreamTransport {
    let mocks: MockPlan?
    let replay: HARReplayTable?
    let unmatched: UnmatchedMode
    let next: any UpstreamTransport

    public init(mocks: MockPlan?, replay: HARReplayTable?, unmatched: UnmatchedMode, next: any UpstreamTransport) {
        self.mocks = mocks
        self.replay = replay
        self.unmatched = unmatched
        self.next = next
    }

    public func startAttempt(
        _ request: ProxyRequest, record: ExchangeRecord, on eventLoop: any EventLoop, delegate: any UpstreamAttemptDelegate
    ) -> UpstreamAttemptCancellation {
        let method = request.method.rawValue
        let path = request.path
        if unmatched == .pass, replay == nil, !(mocks?.mayMatch(method: method, path: path) ?? false) {
            return next.startAttempt(request, record: record, on: eventLoop, delegate: delegate)
        }
        let needsBody = !request.bodyLengthIsZero
            && ((replay?.matchesBody ?? false) || (mocks?.needsBody(method: method, path: path) ?? false))
        // Decided on the head when the body does not matter (the nth counts move once per call).
        let early = needsBody ? nil : answer(MockRequestView(request, body: nil))
        if !needsBody, early == nil, unmatched == .pass {
            return next.startAttempt(request, record: record, on: eventLoop, delegate: delegate)
        }
        let held = HeldAttempt(delegate: delegate, request: request, eventLoop: eventLoop) { held, body in
            if let (response, source) = early ?? (needsBody ? self.answer(MockRequestView(request, body: body)) : nil) {
                record.noteInjection(source, answered: true)
                return held.answer(response)
            }
            guard self.unmatched == .pass else {
                return held.fail(GatewayError(
                    .notMocked, "no mock or recorded response matches \(method) \(path) and unmatched requests are blocked",
                    upstream: request.upstreamName
                ))
            }
            held.pass(to: self.next, request: request, record: record)
        }
        return held.start()
    }

    /// The first answer: a mock rule's, else a recorded entry's.
    private func answer(_ view: MockRequestView) -> (InjectedResponse, Injection)? {
        if let response = mocks?.answer(view) { return (response, .mock) }
        if let response = replay?.answer(view) { return (response, .replay) }
        return nil
    }
}
