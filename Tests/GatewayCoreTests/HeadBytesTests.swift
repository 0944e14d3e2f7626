import GatewayCore
import Testing

/// The word-at-a-time searches agree with a byte-at-a-time reading on every
/// input: random bytes drawn mostly from the ones that matter (CR, LF, HTAB,
/// DEL, controls, high bytes), at every start and end offset, so each match
/// falls at each position of a word and in the tail.
@Suite struct HeadBytesTests {
    /// xorshift64, seeded: the same inputs on every run.
    struct XorShift: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
    }

    static let interesting: [UInt8] = [10, 13, 9, 127, 0, 1, 31, 32, 0x80, 0x8A, 0x8D, 0xFF, 0x7E, 0x20]

    static func samples(count: Int, seed: UInt64) -> [[UInt8]] {
        var rng = XorShift(state: seed | 1)
        return (0..<count).map { _ in
            let length = Int.random(in: 0...40, using: &rng)
            return (0..<length).map { _ in
                Bool.random(using: &rng)
                    ? interesting.randomElement(using: &rng)!
                    : UInt8.random(in: 0x21...0x7E, using: &rng)
            }
        }
    }

    static func referenceFirst(_ bytes: [UInt8], _ start: Int, _ end: Int, lineBreak: Bool) -> Int? {
        (start..<end).first { bytes[$0] == 10 || (lineBreak && bytes[$0] == 13) }
    }

    /// The places, `bytes` and `start..<end`, where `agrees` is false, over
    /// every range of every sample.
    static func disagreements(seed: UInt64, _ agrees: ([UInt8], UnsafeRawBufferPointer, Int, Int) -> Bool) -> [String] {
        var found: [String] = []
        for bytes in samples(count: 400, seed: seed) {
            bytes.withUnsafeBytes { raw in
                for start in 0...bytes.count {
                    for end in start...bytes.count where !agrees(bytes, raw, start, end) {
                        found.append("\(bytes) \(start)..<\(end)")
                    }
                }
            }
        }
        return found
    }

    @Test func firstAndCountAgreeWithAByteAtATimeReading() {
        let found = Self.disagreements(seed: 14) { bytes, raw, start, end in
            let slice = bytes[start..<end]
            return HeadBytes.first(.lineFeed, in: raw, from: start, to: end) == Self.referenceFirst(bytes, start, end, lineBreak: false)
                && HeadBytes.first(.lineBreak, in: raw, from: start, to: end) == Self.referenceFirst(bytes, start, end, lineBreak: true)
                && HeadBytes.count(.lineFeed, in: raw, from: start, to: end) == slice.filter { $0 == 10 }.count
                && HeadBytes.count(.lineBreak, in: raw, from: start, to: end) == slice.filter { $0 == 10 || $0 == 13 }.count
        }
        #expect(found.isEmpty, "\(found.prefix(3))")
    }

    @Test func fieldValueCheckAgreesWithTheByteRule() {
        let found = Self.disagreements(seed: 9) { bytes, raw, start, end in
            HeadBytes.containsNonFieldValueByte(raw, from: start, to: end)
                == bytes[start..<end].contains { !HTTPFieldBytes.isFieldValueByte($0) }
        }
        #expect(found.isEmpty, "\(found.prefix(3))")
    }

    /// Every byte value, at every position of a word and of the tail.
    @Test func everyByteValueAtEveryPosition() {
        for value in 0...255 {
            for position in 0..<17 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 17)
                bytes[position] = UInt8(value)
                bytes.withUnsafeBytes { raw in
                    let isLF = value == 10, isBreak = value == 10 || value == 13
                    #expect(HeadBytes.first(.lineFeed, in: raw, from: 0, to: 17) == (isLF ? position : nil))
                    #expect(HeadBytes.first(.lineBreak, in: raw, from: 0, to: 17) == (isBreak ? position : nil))
                    #expect(HeadBytes.containsNonFieldValueByte(raw, from: 0, to: 17) == !HTTPFieldBytes.isFieldValueByte(UInt8(value)))
                }
            }
        }
    }

    @Test func headLinesKeepTheirStrictness() {
        func scan(_ text: String) -> HTTP1HeadLines.HeadScan {
            Array(text.utf8).withUnsafeBytes { HTTP1HeadLines.scanHead($0, from: 0) }
        }
        func lineEnd(_ text: String) -> Int? {
            Array(text.utf8).withUnsafeBytes { HTTP1HeadLines.lineEnd(in: $0, from: 0) }
        }
        #expect(scan("GET / HTTP/1.1\r\nHost: a.example\r\n\r\n") == .complete(length: 35))
        #expect(scan("GET / HTTP/1.1\r\nHost: a.example\r\n") == .incomplete)
        #expect(scan("GET / HTTP/1.1\r\nHost: a.example\n\r\n") == .bareLineFeed)
        #expect(scan("\n") == .bareLineFeed)
        #expect(lineEnd("Host: a.example\r\nX") == 15)
        #expect(lineEnd("Host: a.\rexample\r\n") == nil)  // bare CR first
        #expect(lineEnd("Host: a.example\n") == nil)  // bare LF
        #expect(lineEnd("Host: a.example\r") == nil)  // no LF after the CR yet
        #expect(lineEnd("Host: a.example") == nil)
    }

    /// A name's bytes against a lowercase name: ASCII case ignored, nothing else folded.
    @Test func namesCompareIgnoringASCIICaseOnly() {
        func check(_ text: String, _ lowercase: StaticString) -> Bool {
            Array(text.utf8).withUnsafeBytes { HTTP1HeadLines.equalsIgnoringCase($0, from: 0, to: $0.count, lowercase) }
        }
        #expect(check("Content-Length", "content-length"))
        #expect(check("CONTENT-LENGTH", "content-length"))
        #expect(!check("Content-Lengt", "content-length"))
        #expect(!check("Content-Lengths", "content-length"))
        #expect(!check("Content_Length", "content-length"))
        #expect(check("", ""))
        // Only A-Z fold: `[` (0x5B) is not `{` (0x7B), `@` is not a backtick.
        #expect(!check("[", "{"))
        #expect(!check("@", "`"))
        let lines = Array("x-Connection: close".utf8)
        #expect(lines.withUnsafeBytes { HTTP1HeadLines.equalsIgnoringCase($0, from: 2, to: 12, "connection") })
    }
}
