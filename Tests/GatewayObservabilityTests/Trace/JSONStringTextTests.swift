import Foundation
import Testing
@testable import GatewayObservability

/// The JSON string escaping the trace lines are written with (curl lines and
/// field values go straight into it): eight bytes are checked at a time, so
/// every byte that needs an escape is tried at every offset of a word.
@Suite("JSON string text", .timeLimit(.minutes(1)))
struct JSONStringTextTests {
    static func reference(_ text: String) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return try Array(encoder.encode([text]).dropFirst().dropLast())
    }

    static func ours(_ text: String) -> [UInt8] {
        var json = JSONLineWriter(capacity: 0)
        json.string(text)
        return json.bytes
    }

    @Test func everyEscapeAtEveryOffsetMatchesJSONEncoder() throws {
        let specials: [String] = ["\u{0}", "\n", "\t", "\u{1F}", "\"", "\\", "\u{7F}", "é", "😀", " ", "~", "/"]
        for length in 1...24 {
            for offset in 0..<length {
                for special in specials {
                    let text = String(repeating: "a", count: offset) + special + String(repeating: "b", count: length - offset - 1)
                    #expect(Self.ours(text) == (try Self.reference(text)), "\(length) \(offset) \(special.unicodeScalars.map(\.value))")
                }
            }
        }
    }

    @Test func wordsOfEveryByteAreJudgedAsByteByByte() {
        // The word test never misses a byte that needs an escape.
        for byte in UInt8.min...UInt8.max {
            for offset in 0..<8 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 8)
                bytes[offset] = byte
                let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                let needs = byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
                if needs { #expect(JSONStringText.mayNeedEscape(word), "byte \(byte) at \(offset)") }
                if !needs { #expect(!JSONStringText.mayNeedEscape(word), "byte \(byte) at \(offset): a clean word is copied whole") }
            }
        }
    }
}
