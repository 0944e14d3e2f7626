import GatewayCore
import Logging
import NIOConcurrencyHelpers
import Testing

/// A request's logger is built when a line is logged, not per
/// request; its lines carry `request=<id>` either way.
@Suite(.timeLimit(.minutes(1)))
struct RequestContextLoggerTests {
    final class Lines: Sendable {
        private let box = NIOLockedValueBox<[Logger.Metadata]>([])
        var all: [Logger.Metadata] { box.withLockedValue { $0 } }
        func append(_ metadata: Logger.Metadata) { box.withLockedValue { $0.append(metadata) } }
    }

    struct Recording: LogHandler {
        let lines: Lines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            lines.append(metadata.merging(event.metadata ?? [:]) { $1 })
        }
    }

    @Test func aTaggedContextsLinesCarryTheRequestID() {
        let lines = Lines()
        let base = Logger(label: "test") { _ in Recording(lines: lines) }
        var context = RequestContext(id: "1x-7", clientAddress: "127.0.0.1:1", logger: base, tagsLinesWithID: true)
        context.logger.debug("retrying", metadata: ["upstream": "api"])
        context.baseLogger.info("untagged")
        var metadata: Logger.Metadata = ["status": "200"]
        context.addRequestMetadata(to: &metadata)
        context.baseLogger.info("exchange line", metadata: metadata)
        // Replacing the logger keeps the tag (it replaces the base).
        var other = base
        other[metadataKey: "component"] = "pool"
        context.logger = other
        context.logger.info("after")
        #expect(lines.all == [
            ["request": "1x-7", "upstream": "api"],
            [:],
            ["request": "1x-7", "status": "200"],
            ["component": "pool", "request": "1x-7"],
        ])
    }

    @Test func anUntaggedContextLogsThroughItsLoggerAsGiven() {
        let lines = Lines()
        let context = RequestContext(id: "t", clientAddress: "127.0.0.1:1", logger: Logger(label: "test") { _ in Recording(lines: lines) })
        context.logger.info("line")
        var metadata: Logger.Metadata = [:]
        context.addRequestMetadata(to: &metadata)
        #expect(metadata.isEmpty)
        #expect(lines.all == [[:]])
    }
}
