import Testing
@testable import GatewayObservability

/// A header's single literal value is kept without an array of parts:
/// it equals, quotes and templates exactly as the same value given as parts.
struct CurlCommandHeaderTests {
    @Test(arguments: ["application/json", "", "it's \"quoted\" $HOME `x` !", "a'b'c"])
    func aLiteralValueIsTheSameAsItsParts(_ value: String) {
        let literal = CurlCommand.Header(name: "X-Test", value: value)
        let parts = CurlCommand.Header(name: "X-Test", value: [.literal(value)])
        #expect(literal == parts)
        #expect(literal.value == [.literal(value)])
        #expect(literal.template == parts.template)
        #expect(CurlCommand.headerWord(literal) == CurlCommand.headerWord(parts))
        let command = { (header: CurlCommand.Header) in
            CurlCommand(method: "GET", url: [.literal("http://h/")], headers: [header], body: .none).line
        }
        #expect(command(literal) == command(parts))
    }

    @Test func wordsAreQuotedAsBefore() {
        #expect(CurlCommand.headerWord(.init(name: "X-Empty", value: "")) == "'X-Empty;'")
        #expect(CurlCommand.headerWord(.init(name: "X-Q", value: "a'b")) == #"'X-Q: a'\''b'"#)
        #expect(CurlCommand.headerWord(.init(name: "Authorization", value: [.literal("Bearer "), .variable("TOKEN")])) == #""Authorization: Bearer ${TOKEN}""#)
        var header = CurlCommand.Header(name: "X-Set", value: "old")
        header.value = [.literal("new")]
        #expect(header.template == "new")
    }
}
