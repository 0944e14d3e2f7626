public import GatewayCore
public import NIOCore

/// The credential is put on each attempt synchronously, by ``inject(into:)``
/// (scope, TRACE and all).
extension AuthInjectionPolicy: AttemptStep {
    public func prepare(_ request: inout ProxyRequest, context: RequestContext, on eventLoop: any EventLoop) -> AttemptStepDecision {
        inject(into: &request)
        return .proceed
    }
}
