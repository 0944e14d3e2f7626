import GatewayObservability
import Testing

@Suite("Shell quoting", .timeLimit(.minutes(1)))
struct ShellQuotingTests {
    @Test func singleQuotesEscapeOnlyQuotes() {
        #expect(ShellQuoting.singleQuoted("plain") == "'plain'")
        #expect(ShellQuoting.singleQuoted("it's") == #"'it'\''s'"#)
        #expect(ShellQuoting.singleQuoted("$HOME `x` \\ ! % \n") == "'$HOME `x` \\ ! % \n'")
    }

    @Test func variablesGoInDoubleQuotesWithEscapes() {
        let word = ShellQuoting.word([.literal("Bearer \"$`\\ x!"), .variable("GITHUB_TOKEN")])
        #expect(word == #""Bearer \"\$\`\\ x"'!'"${GITHUB_TOKEN}""#)
    }

    @Test func variableNamesAreSanitized() {
        #expect(ShellQuoting.sanitizedVariableName("my-api.key") == "my_api_key")
        #expect(ShellQuoting.sanitizedVariableName("1X") == "_1X")
    }

    @Test func inlineSafety() {
        #expect(ShellQuoting.isInlineSafe(Array("a\nb\tc ✓".utf8)))
        #expect(!ShellQuoting.isInlineSafe([0x61, 0x0D]))
        #expect(!ShellQuoting.isInlineSafe([0x61, 0x00]))
        #expect(!ShellQuoting.isInlineSafe([0xC3, 0x28]))
        #expect(CurlCommand.inlineBody(Array("@file".utf8)) == nil)
        #expect(CurlCommand.inlineBody([UInt8](repeating: 0x61, count: CurlCommand.maxInlineBody + 1)) == nil)
    }

    @Test func methodInference() {
        func line(_ method: String, _ body: CurlCommand.Body) -> String {
            CurlCommand(method: method, url: [.literal("http://h/")], headers: [], body: body).line
        }
        #expect(!line("GET", .none).contains("-X"))
        #expect(line("HEAD", .none).contains("--head"))
        #expect(!line("POST", .inline("x")).contains("-X"))
        #expect(line("POST", .none).contains("-X 'POST'"))
        #expect(line("DELETE", .inline("x")).contains("-X 'DELETE'"))
        #expect(line("GET", .none).hasPrefix("curl --http1.1"))
    }
}
