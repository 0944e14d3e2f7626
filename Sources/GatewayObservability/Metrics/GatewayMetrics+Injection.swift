public import GatewayCore

extension GatewayMetrics {
    /// What faults, mocks and replay did to one exchange (issue 55):
    /// `gateway_faults_injected_total{upstream,endpoint,kind}` per fault,
    /// `gateway_mocked_responses_total{upstream,endpoint}` per mocked or
    /// replayed response, under the exchange's endpoint labels.
    func countInjections(_ injections: [Injection], endpoint: EndpointKey) {
        for injection in injections {
            switch injection.source {
            case .fault: faultsInjected.get([endpoint.upstream, endpoint.endpoint, injection.kind]).increment()
            case .mock, .replay: mockedResponses.get([endpoint.upstream, endpoint.endpoint]).increment()
            }
        }
    }
}
