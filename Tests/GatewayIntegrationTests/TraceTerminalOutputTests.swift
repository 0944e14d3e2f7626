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

    /// Issue 52: `gateway trace har > recent.har` (the README's example) wrote
    /// `{\u000a  "log" : ...`: the escape for terminals also took the newlines
    /// between JSON tokens, and `json.load` failed. To a pipe and to `-o`, the
    /// export now parses as JSON and reads back the recorded strings (newlines,
    /// ESC, C1 and bidi characters), while none of them is in the bytes raw.
    @Test func harToAPipeOrAFileIsJSONAndSafeOnATerminal() async throws {
        let dir = try TraceTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = "\(dir)/trace.jsonl"
        let note = "line one\nline two \u{1B}]0;owned\u{07} \u{1B}[2J\r\tend"
        var record = TraceReplayTests.record("hostile", curl: "curl -H 'X-A: \(Self.hostile)' --data-binary 'a\nb\u{1B}[31mc' 'http://127.0.0.1:1/\(Self.hostile)'")
        record.endpoint = "h/\(Self.hostile)"
        record.error = note
        record.responseHeaders = [.init(name: "X-Note", value: note)]
        try TraceReplayTests.writeTrace(file, [record])

        let piped = try await TraceReplayTests.gatewayCLI(["trace", "har", "--file", file])
        #expect(piped.status == 0, "\(piped.stderrString)")
        let out = "\(dir)/out.har"
        let written = try await TraceReplayTests.gatewayCLI(["trace", "har", "--file", file, "-o", out])
        #expect(written.status == 0, "\(written.stderrString)")
        let fromFile = try Data(contentsOf: URL(fileURLWithPath: out))
        #expect(fromFile == Data(piped.stdout), "the same document either way")

        for (name, bytes) in [("stdout", Data(piped.stdout)), ("-o", fromFile)] {
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(Self.isTerminalSafe(text), "\(name): \(text.debugDescription)")
            #expect(text.hasPrefix("{\n"), "\(name): pretty-printed, raw newlines between tokens: \(text.prefix(40).debugDescription)")
            #expect((try? JSONSerialization.jsonObject(with: bytes)) != nil, "\(name) parses as JSON")
            let har = try JSONDecoder().decode(HARLog.self, from: bytes)
            let entry = try #require(har.log.entries.first)
            #expect(entry._gatewayError == note, "\(name)")
            #expect(entry.response.headers.contains(.init(name: "X-Note", value: note)), "\(name)")
            #expect(entry.request.headers.contains(.init(name: "X-A", value: Self.hostile)), "\(name)")
            #expect(entry.request.url == "http://127.0.0.1:1/\(Self.hostile)", "\(name)")
            #expect(entry.request.postData?.text == "a\nb\u{1B}[31mc", "\(name)")
        }

        // What `json.load` of the README's `> recent.har` sees, where python3 is installed.
        if which("python3") != nil {
            let python = try await ProcessRunner.run("python3", ["-c", "import json,sys; d = json.load(open(sys.argv[1])); print(repr(d['log']['entries'][0]['_gatewayError']))", out])
            #expect(python.status == 0, "\(python.stderrString)")
            #expect(python.stdoutString.hasPrefix("'line one\\nline two \\x1b]0;owned\\x07"), "\(python.stdoutString)")
        }
    }
}
