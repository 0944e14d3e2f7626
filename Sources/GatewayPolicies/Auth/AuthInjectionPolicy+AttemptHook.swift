public import GatewayCore

/// On the direct path the credential is put on each attempt synchronously,
/// by the same function the async chain uses (scope, TRACE and all).
extension AuthInjectionPolicy: AttemptHook {
    public func prepare(_ request: inout ProxyRequest) {
        inject(into: &request)
    }
}
