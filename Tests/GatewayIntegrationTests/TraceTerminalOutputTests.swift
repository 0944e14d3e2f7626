import Foundation
import GatewayCore
import GatewayObservability
import GatewayTesting
import Testing

/// Issue 39: `gateway trace list`, `show` and `curl` printed C1 controls and
/// bidi overrides of a recorded path as they were. The record here is as an
/// older version wrote it (characters as they are, even in the curl line):
/// every output shows them escaped, and still means the same.
@Suite("trace list|show|curl are safe on a terminal", .timeLimit(.minutes(2)))
struct TraceTerminalOutputTests {
    static let hostile = "p\u{202E}gnp.exe\u{9B}2J\u{9D}0;t\u{9C}"

    static func isTerminalSafe(_ text: String) -> Bool {
        !TerminalSafety.containsUnsafe(text) { $0 == "\n" }
    }

    @Test func everyTraceCommandEscapesControlAndBidiCharacters() async throws {
        let dir = try TraceTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = "\(dir)/trace.jsonl"
        var record = TraceReplayTests.record("hostile", curl: "curl -H 'X-A: \(Self.hostile)' 'http://127.0.0.1:1/\(Self.hostile)'")
        record.endpoint = "h/\(Self.hostile)"
        try TraceReplayTests.writeTrace(file, [record])

        let list = try await TraceReplayTests.gatewayCLI(["trace", "list", "--file", file])
        #expect(list.status == 0, "\(list.stderrString)")
        #expect(Self.isTerminalSafe(list.stdoutString), "\(list.stdoutString.debugDescription)")
        #expect(list.stdoutString.contains(#"h/p\u{202E}gnp.exe\u{9B}2J"#), "\(list.stdoutString.debugDescription)")

        let show = try await TraceReplayTests.gatewayCLI(["trace", "show", "hostile", "--file", file])
        #expect(show.status == 0, "\(show.stderrString)")
        #expect(Self.isTerminalSafe(show.stdoutString), "\(show.stdoutString.debugDescription)")
        let shown = show.stdoutString.trimmingCharacters(in: .newlines)
        #expect(try TraceRecord.decode(line: shown[...]) == record, "the escaped JSON reads as the record")

        let curl = try await TraceReplayTests.gatewayCLI(["trace", "curl", "hostile", "--file", file])
        #expect(curl.status == 0, "\(curl.stderrString)")
        #expect(Self.isTerminalSafe(curl.stdoutString), "\(curl.stdoutString.debugDescription)")
        let line = curl.stdoutString.trimmingCharacters(in: .newlines)
        #expect(CurlLineRequest.words(line) == CurlLineRequest.words(record.curl), "the line says the same words")
    }
}
