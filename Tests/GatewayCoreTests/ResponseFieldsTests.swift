import GatewayCore
import NIOCore
import NIOHTTP1
import Testing

/// Fields kept as the upstream's lines read as the `HTTPHeaders` they stand
/// for, dropped lines left out; a write makes them `HTTPHeaders` for good.
@Suite struct ResponseFieldsTests {
    static let lines = ByteBuffer(string: "A: 1\r\nConnection: x\r\nB:  two words \r\nA: 3\r\n")

    /// Only an HTTP/2 section's fields are ready for HTTP/2 as they are; a drop
    /// keeps that, fields set anew do not.
    @Test func http2ReadinessLastsUntilTheFieldsAreSet() {
        #expect(!ResponseFields(HTTPHeaders([("a", "1")])).isHTTP2Ready)
        #expect(!ResponseFields(lines: Self.lines, dropped: 0).isHTTP2Ready)
        var fields = ResponseFields(http2Section: HTTPHeaders([("a", "1"), ("b", "2")]))
        #expect(fields.isHTTP2Ready)
        fields.drop(named: ["b"])
        #expect(fields.isHTTP2Ready)
        #expect(fields.headers.map(\.name) == ["a"])
        fields.headers = HTTPHeaders([("A", "1")])
        #expect(!fields.isHTTP2Ready)
    }

    @Test func linesReadAsHeadersWithoutTheDroppedOnes() {
        let fields = ResponseFields(lines: Self.lines, dropped: 0b10)
        #expect(fields.headers.map { "\($0.name)=\($0.value)" } == ["A=1", "B=two words", "A=3"])
        var seen: [String] = []
        var names: [String] = []
        ResponseFields.forEachLine(of: Self.lines, dropped: 0b1001) { raw, line in
            seen.append(String(decoding: UnsafeRawBufferPointer(rebasing: raw[line.start..<line.end]), as: UTF8.self))
            names.append(String(decoding: UnsafeRawBufferPointer(rebasing: raw[line.start..<line.colon]), as: UTF8.self))
        }
        #expect(seen == ["Connection: x", "B:  two words "])
        #expect(names == ["Connection", "B"])
    }

    @Test func writingTheHeadersReplacesTheLines() {
        var fields = ResponseFields(lines: Self.lines, dropped: 0)
        var headers = fields.headers
        headers.replaceOrAdd(name: "A", value: "9")
        fields.headers = headers
        guard case .headers(let stored) = fields.storage else {
            Issue.record("written fields are kept as HTTPHeaders")
            return
        }
        #expect(stored["A"] == ["9"])
        #expect(stored["B"] == ["two words"])
    }

    @Test func namesAreFoundWithoutStringsAndDroppedLinesAreSkipped() {
        let lines = ResponseFields(lines: Self.lines, dropped: 0b10)
        func named(_ text: String) -> (UnsafeRawBufferPointer) -> Bool {
            { $0.elementsEqual(text.utf8) }
        }
        #expect(lines.containsName(where: named("B")))
        #expect(!lines.containsName(where: named("Connection")))
        let headers = ResponseFields(lines.headers)
        #expect(headers.containsName(where: named("B")))
        #expect(!headers.containsName(where: named("Connection")))
    }
}
