import GatewayConfig
import GatewayCore
import GatewayTesting
import Logging
import NIOConcurrencyHelpers
import Testing
@testable import GatewayObservability

/// Ids that normalization keeps (`report-13`) make a series each: the gateway
/// warns once per upstream, naming the `endpoints:` template that folds them.
@Suite(.timeLimit(.minutes(1)))
struct IdLikePathsTests {
    final class Capture: Sendable {
        let lines = NIOLockedValueBox<[String]>([])
        var logger: Logger {
            Logger(label: "test") { _ in
                ClosureLogHandler { [self] event, metadata in
                    let fields = metadata.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
                    lines.withLockedValue { $0.append("\(event.level) \(event.message) \(fields)") }
                }
            }
        }
        var warnings: [String] { lines.withLockedValue { $0.filter { $0.hasPrefix("warning") } } }
    }

    func observer(_ capture: Capture, endpoints: [String] = []) -> MetricsObserver {
        var config = GatewayConfig()
        config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("api.test")!], endpoints: endpoints.map { EndpointTemplate($0)! })]
        return MetricsObserver(metrics: GatewayMetrics(), config: config, logger: capture.logger)
    }

    func request(_ observer: MetricsObserver, _ target: String, upstream: String? = "api", host: String = "api.test") {
        _ = observer.recorder(for: ProxyRequest(method: .GET, scheme: .http, host: host, port: 80, target: target, headers: [:], upstreamName: upstream))
    }

    @Test func idsTheNormalizerKeepsAreWarnedOnceWithTheTemplate() throws {
        let capture = Capture()
        let observer = observer(capture)
        for i in 13..<28 { request(observer, "/slow/report-\(i)?x=\(i)") }
        for i in 1..<20 { request(observer, "/other/page\(i)") }
        let warnings = capture.warnings
        #expect(warnings.count == 1, "\(warnings)")
        let line = try #require(warnings.first)
        #expect(line.contains("template=/slow/{id}"), "\(line)")
        #expect(line.contains("upstream=api"))
        #expect(line.contains("/slow/report-13"))
        #expect(line.contains(#"hint=endpoints: ["/slow/{id}"]"#), "\(line)")
        #expect(!line.contains("x="), "no query in the line")
    }

    @Test func foldedIdsTemplatesAndFewVersionsAreNotWarned() {
        let capture = Capture()
        let folded = observer(capture, endpoints: ["/reports/{id}"])
        for i in 0..<30 {
            request(folded, "/users/\(i)")  // all digits: folded to {id}
            request(folded, "/items/123e4567-e89b-12d3-a456-4266141740\(String(format: "%02d", i))")  // a UUID
            request(folded, "/reports/report-\(i)")  // a configured template
        }
        for version in 1...3 { request(folded, "/v\(version)/status") }  // a few versions: no pile-up
        #expect(capture.warnings.isEmpty, "\(capture.warnings)")
    }

    /// Checked only when a series is made: a known endpoint costs nothing more.
    @Test func onlyNewSeriesAreChecked() {
        let capture = Capture()
        let observer = observer(capture)
        for _ in 0..<1_000 { request(observer, "/slow/report-1") }
        #expect(capture.warnings.isEmpty)
        #expect(IdLikePaths.template(folding: "/slow/report-13/{id}/v2") == "/slow/{id}/{id}/{id}")
        #expect(IdLikePaths.template(folding: "/users/{id}") == nil)
    }
}
