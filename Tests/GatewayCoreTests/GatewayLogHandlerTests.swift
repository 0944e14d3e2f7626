#if canImport(Glibc)
import Glibc
#endif
@testable import GatewayCore
import Logging
import NIOConcurrencyHelpers
import Testing

/// The gateway's log handler writes exactly what swift-log's `StreamLogHandler`
/// would (people grep and parse these lines), only cheaper.
@Suite(.timeLimit(.minutes(1)))
struct GatewayLogHandlerTests {
    struct Error42: Error, CustomStringConvertible { var description: String { "went wrong" } }

    final class Captured: TextOutputStream, @unchecked Sendable {
        private let lines = NIOLockedValueBox<[String]>([])
        func write(_ string: String) { lines.withLockedValue { $0.append(string) } }
        var last: String { lines.withLockedValue { $0.last ?? "" } }
    }

    /// The line without its leading timestamp (the two may straddle a second).
    func untimed(_ line: String) -> Substring {
        line.drop(while: { $0 != " " })
    }

    @Test(arguments: [
        ("gateway", [:], nil, false),
        ("gateway", ["request": "1x-4"], nil, false),
        ("gateway", ["request": "1x-4", "b": "base"], ["status": "200", "b": "explicit", "ms": "0.41"], false),
        ("", [:], ["k": "v"], true),
        ("gateway", ["request": "1x-4"], ["list": .array(["a", "b"]), "dict": .dictionary(["z": "1"])], true),
        // The exchange line's shape: no metadata of the logger's own, the event's keys only.
        ("gateway", [:], [
            "status": "200", "ms": "0.41", "bytes_in": "0", "bytes_out": "1024", "upstream": "api", "request": "1x-4",
            "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "span_id": "00f067aa0ba902b7", "error": "upstream_timeout",
        ], false),
        ("gateway", [:], ["n": .stringConvertible(42), "list": .array(["a"])], false),
    ] as [(String, Logger.Metadata, Logger.Metadata?, Bool)])
    func linesMatchStreamLogHandler(label: String, base: Logger.Metadata, explicit: Logger.Metadata?, withError: Bool) {
        let captured = Captured()
        var reference = StreamLogHandler(label: label, stream: captured, metadataProvider: nil)
        reference.metadata = base
        let event = LogEvent(
            level: .info, message: "GET http://h/p 200", metadata: explicit, source: "GatewayListener",
            file: #fileID, function: #function, line: #line
        )
        var withErrorEvent = event
        if withError { withErrorEvent.error = Error42() }
        reference.log(event: withErrorEvent)

        let line = GatewayLogHandler.format(withErrorEvent, label: label, metadata: base, provided: nil, timestamp: "TS")
        #expect(untimed(line) == untimed(captured.last))
        #expect(line.hasPrefix("TS info"))
        #expect(line.hasSuffix("[GatewayListener] GET http://h/p 200\n"))
    }

    @Test(arguments: [
        "plain", .stringConvertible(42), .stringConvertible(0.5), .array(["a", .array([])]), .dictionary(["k": "v"]), .dictionary([:]),
    ] as [Logger.MetadataValue])
    func valuesAreAppendedAsInterpolationWritesThem(_ value: Logger.MetadataValue) {
        var line = "x="
        GatewayLogHandler.appendValue(value, to: &line)
        #expect(line == "x=\(value)")
    }

    @Test func providedMetadataSitsBetweenBaseAndExplicit() {
        let event = LogEvent(level: .warning, message: "m", metadata: ["a": "explicit"], source: "S", file: "", function: "", line: 0)
        let line = GatewayLogHandler.format(event, label: "l", metadata: ["a": "base", "b": "base", "c": "base"], provided: ["b": "provided", "a": "provided"], timestamp: "TS")
        #expect(line == "TS warning l: a=explicit b=provided c=base [S] m\n")
    }

    @Test func timestampHasTheStreamLogHandlerShape() {
        let stamp = LogTimestamp.now()
        // 2026-11-22T02:08:37+0000
        #expect(stamp.count == 24)
        #expect(stamp.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}/) != nil)
    }

    @Test func writesWholeLinesToItsFileDescriptor() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let queue = LogLineQueue(fileDescriptor: fds[1], thread: WriterThread(name: "log-test"))
        var logger = Logger(label: "gateway") { label in GatewayLogHandler(label: label, queue: queue, metadataProvider: nil) }
        logger[metadataKey: "request"] = "7"
        logger.info("hello", metadata: ["status": "200"])
        logger.debug("below the level: not written")
        queue.flush()
        close(fds[1])
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = read(fds[0], &bytes, bytes.count)
        let text = String(decoding: bytes[0..<max(0, count)], as: UTF8.self)
        #expect(text.hasSuffix(" info gateway: request=7 status=200 [GatewayCoreTests] hello\n"))
        #expect(text.split(separator: "\n").count == 1)
    }
}
