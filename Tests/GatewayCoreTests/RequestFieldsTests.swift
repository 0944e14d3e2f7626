import GatewayCore
import GatewayTesting
import NIOHTTP1
import Testing

/// ``RequestFields`` (a client's lines as bytes, with the gateway's edits)
/// must read and edit as the `HTTPHeaders` the steps used before: the same
/// fields in the same order after any edits, whatever the names' case.
struct RequestFieldsTests {
    static let names = [
        "Host", "host", "Accept", "ACCEPT", "Authorization", "authorization", "Connection", "Keep-Alive", "TE",
        "Proxy-Authorization", "Upgrade", "Via", "X-Trace", "x-trace", "Cookie", "Content-Length", "traceparent",
    ]
    static let values = ["", "a", "b, c", ", ,", "keep-alive, X-Trace", "close", "Bearer t0k3n", "x=1; y=2", "v\tw", "é"]

    /// A model of the semantics: the fields as an array of pairs.
    struct Model {
        var fields: [(name: String, value: String)]

        mutating func remove(_ name: String) { fields.removeAll { $0.name.lowercased() == name.lowercased() } }
    }

    @Test(arguments: 0..<40)
    func editsReadAsTheModelDoes(seed: Int) throws {
        var random = HeadBytesTests.XorShift(state: UInt64(seed) &* 0x9E37_79B9 &+ 7)
        let count = Int.random(in: 0...12, using: &random)
        var model = Model(fields: (0..<count).map { _ in (Self.names.randomElement(using: &random)!, Self.values.randomElement(using: &random)!) })
        var fields = seed.isMultiple(of: 4) ? RequestFields(model.fields.map { ($0.name, $0.value) }) : RequestFields.lines(HTTPHeaders(model.fields.map { ($0.name, $0.value) }))
        try check(fields, model)
        for _ in 0..<10 {
            let name = Self.names.randomElement(using: &random)!
            let value = Self.values.randomElement(using: &random)!
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                fields.add(name: name, value: value)
                model.fields.append((name, value))
            case 1:
                fields.remove(name: name)
                model.remove(name)
            case 2:
                fields.replaceOrAdd(name: name, value: value)
                model.remove(name)
                model.fields.append((name, value))
            case 3:
                fields.prepend(name: name, value: value)
                model.fields.insert((name, value), at: 0)
            case 4:
                HopByHopHeaders.removeAll(from: &fields)
                var headers = HTTPHeaders(model.fields.map { ($0.name, $0.value) })
                HopByHopHeaders.removeAll(from: &headers)
                model.fields = headers.map { ($0.name, $0.value) }
            default:
                fields.removeAllFields { name, value in name.count == 2 || value.isEmpty }
                model.fields.removeAll { $0.name.utf8.count == 2 || $0.value.isEmpty }
            }
            try check(fields, model)
        }
    }

    func check(_ fields: RequestFields, _ model: Model, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let listed = fields.map { "\($0.name)=\($0.value)" }
        #expect(listed == model.fields.map { "\($0.name)=\($0.value)" }, sourceLocation: sourceLocation)
        #expect(fields.count == model.fields.count, sourceLocation: sourceLocation)
        let headers = HTTPHeaders(model.fields.map { ($0.name, $0.value) })
        #expect(fields.headers == headers, sourceLocation: sourceLocation)
        for name in Self.names {
            #expect(fields.first(name: name) == headers.first(name: name), sourceLocation: sourceLocation)
            #expect(fields.contains(name: name) == headers.contains(name: name), sourceLocation: sourceLocation)
            #expect(fields[name] == headers[name], sourceLocation: sourceLocation)
            #expect(fields[canonicalForm: name] == headers[canonicalForm: name], sourceLocation: sourceLocation)
        }
        var viaBytes: [String] = []
        fields.forEachField { name, value, _ in viaBytes.append(String(decoding: name, as: UTF8.self) + "=" + String(decoding: value, as: UTF8.self)) }
        #expect(viaBytes == listed, sourceLocation: sourceLocation)
    }

    /// A removal asks about each field once, in order: a predicate may keep
    /// state (the router keeps the first `Host` that names the authority).
    @Test func aRemovalVisitsEachFieldOnceInOrder() {
        var fields = RequestFields.lines("A: 1\r\nB: 2\r\nC: 3\r\n")
        fields.prepend(name: "P", value: "0")
        fields.add(name: "D", value: "4")
        fields.add(name: "E", value: "5")
        var visited: [String] = []
        fields.removeAllFields { name, _ in
            let text = String(decoding: name, as: UTF8.self)
            visited.append(text)
            return text == "P" || text == "B" || text == "D"
        }
        #expect(visited == ["P", "A", "B", "C", "D", "E"])
        #expect(fields.map(\.name) == ["A", "C", "E"])
        var seen = false
        fields.prepend(name: "X", value: "first")
        fields.add(name: "X", value: "second")
        fields.removeAllFields { name, _ in
            guard name.elementsEqual("X".utf8) else { return false }
            defer { seen = true }
            return seen
        }
        #expect(fields.map(\.value) == ["first", "1", "3", "5"])
    }

    @Test func linesAreReadWithoutTheWhitespaceAroundValues() {
        let fields = RequestFields.lines("A:   b  \r\nEmpty:\r\nTab:\tv\t\r\n")
        #expect(fields.map { "\($0.name)=\($0.value)" } == ["A=b", "Empty=", "Tab=v"])
        var fromLine: [Bool] = []
        var edited = fields
        edited.add(name: "Via", value: "1.1 gateway")
        edited.forEachField { _, _, line in fromLine.append(line) }
        #expect(fromLine == [true, true, true, false])
    }

    @Test(arguments: ["Bad Name: x\r\n", "X : y\r\n", "X: a\u{1}b\r\n", ": novalue\r\n", "NoColon\r\n", " folded: x\r\n", "X: a\rb\r\n"])
    func malformedLinesAreRefused(_ text: String) {
        let bytes = Array(text.utf8)
        let count = bytes.count { $0 == UInt8(ascii: "\n") }
        #expect(throws: FieldLines.Malformed.self) {
            try bytes.withUnsafeBytes { try FieldLines(parsing: $0, from: 0, to: $0.count, count: count) }
        }
    }

    /// `FieldLines` reads a block of lines as the parser read each line on
    /// its own (``HTTP1HeadLines/field(_:from:to:)``): the same verdict, and
    /// the same names and values, on random lines made mostly of the bytes
    /// that matter (colon, space, HTAB, CR, LF, controls, DEL, high bytes).
    @Test(arguments: 0..<20)
    func linesReadAsEachLineAlone(seed: Int) throws {
        var random = HeadBytesTests.XorShift(state: UInt64(seed) &* 0x2545_F491_4F6C_DD1D &+ 11)
        let alphabet: [UInt8] = Array("aZ-_.:: \t\t!~".utf8) + [0, 1, 13, 10, 127, 0x80, 0xC3, 0xA9, 0xFF]
        var verdicts = (accepted: 0, refused: 0)
        for _ in 0..<200 {
            let count = Int.random(in: 0...6, using: &random)
            var lines: [[UInt8]] = []
            for _ in 0..<count {
                var line = Array("X-\(Int.random(in: 0...9, using: &random))".utf8)
                if Int.random(in: 0..<4, using: &random) > 0 { line += Array(": ".utf8) }
                for _ in 0..<Int.random(in: 0...8, using: &random) { line.append(alphabet.randomElement(using: &random)!) }
                if Int.random(in: 0..<3, using: &random) == 0 { line.insert(alphabet.randomElement(using: &random)!, at: Int.random(in: 0...line.count, using: &random)) }
                lines.append(line)
            }
            let block: [UInt8] = lines.flatMap { $0 + [13, 10] }
            // What the parser's head scan lets through: no LF but in a CRLF.
            let lineFeeds = block.count { (byte: UInt8) in byte == 10 }
            guard lineFeeds == count else { continue }
            var expected: [(String, String)]? = []
            block.withUnsafeBytes { raw in
                var start = 0
                for _ in 0..<count {
                    guard let end = HTTP1HeadLines.lineEnd(in: raw, from: start), let field = HTTP1HeadLines.field(raw, from: start, to: end) else {
                        expected = nil
                        return
                    }
                    expected?.append(field)
                    start = end + 2
                }
            }
            let parsed = try? block.withUnsafeBytes { try FieldLines(parsing: $0, from: 0, to: $0.count, count: count) }
            #expect((parsed == nil) == (expected == nil), "\(block)")
            if parsed == nil { verdicts.refused += 1 } else { verdicts.accepted += 1 }
            if let parsed, let expected {
                let fields = RequestFields(lines: parsed)
                #expect(fields.map { "\($0.name)=\($0.value)" } == expected.map { "\($0.0)=\($0.1)" }, "\(block)")
            }
        }
        #expect(verdicts.accepted >= 10 && verdicts.refused >= 10, "both verdicts drawn: \(verdicts)")
    }

    @Test func tokensAreReadFromTheBytes() {
        let fields = RequestFields.lines("Connection: Keep-Alive , Upgrade,,x\r\nTE: trailers\r\nconnection: close\r\n")
        var tokens: [String] = []
        fields.forEachToken(ofField: "connection") { tokens.append(String(decoding: $0, as: UTF8.self)) }
        #expect(tokens == ["Keep-Alive", "Upgrade", "x", "close"])
        #expect(fields.field("connection", lists: "upgrade"))
        #expect(fields.field("te", lists: "trailers"))
        #expect(!fields.field("te", lists: "chunked"))
    }
}

