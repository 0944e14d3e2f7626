public import GatewayCore
public import NIOCore

/// On the direct path the credential is put on each attempt synchronously,
/// by the same function the async chain uses (scope, TRACE and all).
extension AuthInjectionPolicy: AttemptStep {
    public func prepare(_ request: inout ProxyRequest, context: RequestContext, on eventLoop: any EventLoop) -> AttemptStepDecision {
        inject(into: &request)
        return .proceed
    }
}
