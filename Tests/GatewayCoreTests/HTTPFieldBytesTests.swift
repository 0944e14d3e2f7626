import GatewayCore
import Testing

/// What HTTP/1.1 can carry of a field read from an HTTP/2 section (RFC 9110
/// §5.1, §5.5): a token name (a pseudo-field's `:` aside), a value of HTAB,
/// SP, VCHAR and obs-text.
@Suite("HTTPFieldBytes")
struct HTTPFieldBytesTests {
    @Test(arguments: [("x-ok", "a b\tc"), (":status", "200"), ("accept", ""), ("x", "caf\u{e9}"), ("!#$%&'*+-.^_`|~09az", "v")])
    func tokensAndFieldValuesAreCarried(name: String, value: String) {
        #expect(HTTPFieldBytes.canCarry(name: name, value: value))
    }

    @Test(arguments: [("", "v"), (":", "v"), ("bad name", "v"), ("x:y", "v"), ("x", "a\u{01}b"), ("x", "a\rb"), ("x", "a\nb"), ("x", "\u{7f}"), ("x", "a\u{0}")])
    func anythingElseIsNot(name: String, value: String) {
        #expect(!HTTPFieldBytes.canCarry(name: name, value: value))
    }

    @Test func namesAreLowercasedOnlyWhenTheyNeedIt() {
        #expect(HTTPFieldBytes.lowercasedName("Content-Type") == "content-type")
        #expect(HTTPFieldBytes.lowercasedName("x-already") == "x-already")
    }

    @Test func uppercaseIsTheLettersAToZOnly() {
        #expect(HTTPFieldBytes.hasUppercase("x-Trace"))
        #expect(HTTPFieldBytes.hasUppercase("Z"))
        // The bytes either side of A-Z, and non-ASCII letters, are not uppercase ASCII.
        #expect(!HTTPFieldBytes.hasUppercase("@[`{"))
        #expect(!HTTPFieldBytes.hasUppercase("x-\u{C9}t\u{E9}"))
        #expect(!HTTPFieldBytes.hasUppercase(""))
    }
}
