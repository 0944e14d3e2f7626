import Logging
import NIOConcurrencyHelpers
import Testing

@testable import GatewayTracing

/// swift-otel's diagnostic log as the gateway reads it: the batch span
/// processor's drops counted, its warnings passed on without secrets, export
/// failures logged at most once a minute. The messages are swift-otel
/// 1.6.0's (`OTelBatchSpanProcessor.swift`), as these tests write them.
@Suite struct ExportDiagnosticsTests {
    final class Recorder: Sendable {
        private let box = NIOLockedValueBox<(drops: [String: Int], lines: [String])>(([:], []))

        var drops: [String: Int] { box.withLockedValue { $0.drops } }
        var lines: [String] { box.withLockedValue { $0.lines } }

        func dropped(_ reason: String, _ count: Int) { box.withLockedValue { $0.drops[reason, default: 0] += count } }
        func line(_ text: String) { box.withLockedValue { $0.lines.append(text) } }
    }

    struct Target: LogHandler {
        let recorder: Recorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let fields = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            recorder.line("\(event.level) \(event.message) \(fields)")
        }
    }

    /// swift-otel's diagnostic logger as the gateway makes it, at the level swift-otel would set.
    func diagnostics(_ recorder: Recorder) -> Logger {
        let target = Logger(label: "gateway") { _ in Target(recorder: recorder) }
        var logger = Logger(label: "swift-otel") { _ in
            ExportDiagnostics(target: target) { reason, count in recorder.dropped(reason, count) }
        }
        logger.logLevel = .error  // OTEL_LOG_LEVEL=error: the drops are counted all the same
        logger[metadataKey: "component"] = "OTelBatchSpanProcessor"
        return logger
    }

    @Test func spansDroppedFromAFullQueueAreCounted() {
        let recorder = Recorder()
        diagnostics(recorder).warning(
            "Spans were dropped this iteration because queue was full", metadata: ["queue_size": "2048", "dropped_count": "7"]
        )
        #expect(recorder.drops == ["queue_full": 7])
        #expect(recorder.lines.count == 1)
        #expect(recorder.lines.first?.hasPrefix("warning tracing: Spans were dropped") == true)
    }

    @Test func aFailedBatchIsCountedAndLoggedAtMostOnceAMinute() {
        let recorder = Recorder()
        var logger = diagnostics(recorder)
        logger[metadataKey: "batch_size"] = "12"
        struct Refused: Error, CustomStringConvertible { var description: String { "connection refused" } }
        logger.warning("Failed to export batch.", error: Refused())
        logger.warning("Failed to export batch.", error: Refused())
        logger[metadataKey: "batch_size"] = "3"
        logger.warning("Failed to export batch.", error: Refused())
        #expect(recorder.drops == ["export_failed": 27])
        #expect(recorder.lines.count == 1, "\(recorder.lines)")
        #expect(recorder.lines.first?.contains("error=connection refused") == true, "\(recorder.lines)")
    }

    @Test func theFailureLogSumsWhatItHeldBack() {
        let log = ExportFailureLog()
        let start = ContinuousClock.now
        #expect(log.shouldLog(count: 5, now: start, interval: .seconds(60)) == 0)
        #expect(log.shouldLog(count: 4, now: start + .seconds(10), interval: .seconds(60)) == nil)
        #expect(log.shouldLog(count: 2, now: start + .seconds(30), interval: .seconds(60)) == nil)
        #expect(log.shouldLog(count: 1, now: start + .seconds(61), interval: .seconds(60)) == 6)
    }

    @Test func valuesFromTheEnvironmentAreNeverPassedOn() {
        let recorder = Recorder()
        diagnostics(recorder).warning(
            "Failed to update configuration from environment",
            metadata: ["environment_key": "OTEL_EXPORTER_OTLP_HEADERS", "environment_value": "x-api-key=s3cr3t", "new_value": "x-api-key=s3cr3t"]
        )
        #expect(recorder.lines.count == 1)
        #expect(recorder.lines.allSatisfy { !$0.contains("s3cr3t") }, "\(recorder.lines)")
        #expect(recorder.lines.first?.contains("environment_key=OTEL_EXPORTER_OTLP_HEADERS") == true)
        #expect(recorder.drops.isEmpty)
    }

    @Test func belowWarningNothingIsPassedOn() {
        let recorder = Recorder()
        diagnostics(recorder).info("Configuration updated from environment", metadata: ["environment_value": "s3cr3t"])
        #expect(recorder.lines.isEmpty)
    }
}
