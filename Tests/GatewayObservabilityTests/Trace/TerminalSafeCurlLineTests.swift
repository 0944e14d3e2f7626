import GatewayCore
@testable import GatewayObservability
import Testing

/// Issue 39: C1 controls (`\u{9B}2J`, an OSC) and bidi overrides in header
/// values and paths reached the curl lines as they were. Now a curl line shows
/// none of them, and still says the same bytes to a shell (and to the HAR
/// export's reader).
@Suite("Curl lines are safe on a terminal", .timeLimit(.minutes(1)))
struct TerminalSafeCurlLineTests {
    static let hostile = ["a\u{9B}2Jb", "\u{202E}gnp.exe", "x\u{9D}0;title\u{9C}y", "it's \u{2066}'\u{200F}", "del\u{7F}", "\u{85}"]

    static func isTerminalSafe(_ text: String) -> Bool {
        !TerminalSafety.containsUnsafe(text) { $0 == "\n" || $0 == "\t" }
    }

    @Test(arguments: hostile)
    func headerValuesAndURLsAreWrittenWithSubstitutions(_ text: String) throws {
        let command = CurlCommand(
            method: "GET", url: [.literal("http://h/p" + text + "?q=" + text)],
            headers: [
                CurlCommand.Header(name: "X-Plain", value: text),
                CurlCommand.Header(name: "X-Variable", value: [.literal("Bearer " + text), .variable("TOKEN"), .literal(text)]),
            ],
            body: .none, proxy: "http://127.0.0.1:8080"
        )
        let line = command.line
        #expect(Self.isTerminalSafe(line), "\(line.debugDescription)")
        #expect(line.contains("$(printf '\\"))
        let read = try #require(CurlLineRequest(line: line))
        #expect(read.url == "http://h/p" + text + "?q=" + text)
        #expect(read.headers.map(\.value).prefix(2) == [text, "Bearer " + text + "${TOKEN}" + text])
    }

    @Test func aBodyWithUnsafeCharactersGoesToAFile() {
        #expect(!ShellQuoting.isInlineSafe(Array("ok \u{202E}".utf8)))
        #expect(!ShellQuoting.isInlineSafe(Array("ok \u{9B}".utf8)))
        #expect(ShellQuoting.isInlineSafe(Array("two\nlines\tand é €".utf8)))
    }

    /// Lines of older trace files, with the characters as they are, are
    /// rewritten for `trace curl` where they stand (single, double or no quotes).
    @Test func olderLinesAreMadeSafeWhereTheCharactersStand() throws {
        let old = "curl -H 'X-A: a\u{9B}2J' -H \"X-B: ${T}\u{202E}\" 'http://h/\u{202E}'"
        let safe = ShellQuoting.terminalSafeLine(old)
        #expect(Self.isTerminalSafe(safe), "\(safe.debugDescription)")
        #expect(CurlLineRequest.words(safe) == CurlLineRequest.words(old))
        #expect(ShellQuoting.terminalSafeLine("curl 'http://h/'") == "curl 'http://h/'")
    }
}
