import GatewayCore
import Testing

/// The one definition of what may not reach a terminal as it is (issue 39:
/// C1 controls and bidi overrides reached curl lines, `trace list|show` and
/// the info log line).
@Suite("Terminal safety")
struct TerminalSafetyTests {
    @Test(arguments: [
        0x00, 0x07, 0x0A, 0x1B, 0x1F, 0x7F, 0x80, 0x85, 0x9B, 0x9D, 0x9F,
        0x061C, 0x200E, 0x200F, 0x202A, 0x202D, 0x202E, 0x2066, 0x2069,
    ] as [UInt32])
    func controlsAndBidiFormattingAreUnsafe(_ value: UInt32) throws {
        let scalar = try #require(Unicode.Scalar(value))
        #expect(TerminalSafety.isUnsafe(scalar))
        // Every unsafe character starts with a byte the byte scan flags.
        let lead = try #require(String(scalar).utf8.first)
        #expect(TerminalSafety.mayStartUnsafe(lead))
    }

    @Test(arguments: [0x20, 0x41, 0x7E, 0xA0, 0xE9, 0x20AC, 0x200B, 0x200D, 0x2028, 0x202F, 0x2065, 0x206A, 0x1F600] as [UInt32])
    func printableTextIsSafe(_ value: UInt32) throws {
        let scalar = try #require(Unicode.Scalar(value))
        #expect(!TerminalSafety.isUnsafe(scalar))
    }

    @Test func escapesAreVisibleAndJSONStaysJSON() {
        #expect(TerminalSafety.escaped("GET /a\u{9B}2J\u{202E}b\u{1B}") == #"GET /a\u{9B}2J\u{202E}b\u{1B}"#)
        #expect(TerminalSafety.escaped("{\"a\":\"x\u{202E}\u{7F}\"}", style: .json) == #"{"a":"x\u202e\u007f"}"#)
        #expect(TerminalSafety.escaped("café – ✓") == "café – ✓")
        #expect(!TerminalSafety.containsUnsafe("tab\there", allowing: { $0 == "\t" }))
        #expect(TerminalSafety.containsUnsafe("tab\there"))
    }
}
