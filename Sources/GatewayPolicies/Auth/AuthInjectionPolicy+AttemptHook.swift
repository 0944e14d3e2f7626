public import GatewayCore

/// On the direct path the credential is put on each attempt synchronously.
extension AuthInjectionPolicy: AttemptHook {
    public func prepare(_ request: inout ProxyRequest) {
        guard let name = request.upstreamName, let credential = credentials[name] else { return }
        credential.apply(to: &request)
    }
}
