import Foundation
import GatewayObservability
import Testing

/// The hand-written JSON line is byte for byte what `JSONEncoder` wrote before
/// (sorted keys, slashes unescaped), so existing trace files and tools read the same.
@Suite("Trace record JSON line", .timeLimit(.minutes(1)))
struct TraceRecordJSONTests {
    static func encoderLine(_ record: TraceRecord) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try Array(encoder.encode(record)) + [UInt8(ascii: "\n")]
    }

    static let awkwardText: String = {
        var scalars = (0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) }
        scalars += ["\"", "\\", "/", "\u{7F}", "é", "€", "😀", "'", "$", "{", "}", "\u{2028}"]
        return String(scalars)
    }()

    static let records: [TraceRecord] = [
        TraceRecord(
            id: "a", time: "2026-11-21T23:59:35.123Z", client: "127.0.0.1:1", upstream: nil, method: "GET", endpoint: "h/p",
            attempts: [], status: nil, error: nil, requestBytes: nil, responseBytes: 0, duration: 0, curl: "curl", curlDirect: ""
        ),
        TraceRecord(
            id: "b-\(awkwardText)", time: "t", client: "[::1]:443", upstream: "api \(awkwardText)", method: "POST",
            endpoint: "api.test/x?y=1&z=/", attempts: [
                .init(status: 502, error: "upstream_connect", reusedConnection: false, connect: 0.000012, tls: nil, ttfb: nil, total: 1.0),
                .init(status: nil, error: nil, reusedConnection: true, connect: nil, tls: 1e-7, ttfb: 123.456, total: 1_234_567.125),
                .init(status: 200, error: nil, reusedConnection: true, connect: 0.1, tls: 0.2, ttfb: 0.30000000000000004, total: 2.5e-5),
            ],
            status: 200, error: "cancelled", requestBytes: 65_536, responseBytes: -1, duration: 3.0e-3,
            curl: "curl -x 'http://127.0.0.1:8080' --data-binary '\(awkwardText)' 'https://api.test/'", curlDirect: "curl ${TOKEN} \n\t"
        ),
        // The optional fields HAR export reads (phase offsets, response headers).
        TraceRecord(
            id: "c", time: "t", client: "c", upstream: "u", method: "GET", endpoint: "h/p", attempts: [
                .init(status: 503, error: nil, reusedConnection: false, connect: 0.001, tls: 0.002, ttfb: 0.01, total: 0.02, start: 1e-5, connectStart: 2e-6, sent: 0.004),
                .init(status: 200, error: nil, reusedConnection: true, connect: nil, tls: nil, ttfb: 0.01, total: 0.02, start: 0.5, connectStart: nil, sent: 0.0001),
            ],
            status: 200, error: nil, requestBytes: 0, responseBytes: 3, duration: 0.6, curl: "curl", curlDirect: "curl",
            responseHeaders: [.init(name: "Content-Type", value: "text/plain"), .init(name: "Set-Cookie \(awkwardText)", value: "${REDACTED_SET_COOKIE}"), .init(name: "X-Empty", value: "")]
        ),
        TraceRecord(
            id: "d", time: "t", client: "c", upstream: nil, method: "GET", endpoint: "h/p", attempts: [],
            status: nil, error: "connect_failed", requestBytes: nil, responseBytes: 0, duration: 0.1, curl: "curl", curlDirect: "curl", responseHeaders: []
        ),
        // Tracing on: the exchange's trace id, between `time` and `upstream`.
        TraceRecord(
            id: "e", time: "t", client: "c", upstream: "u", method: "GET", endpoint: "h/p", attempts: [],
            status: 200, error: nil, requestBytes: 0, responseBytes: 1, duration: 0.1, curl: "curl", curlDirect: "curl",
            traceId: "4bf92f3577b34da6a3ce929d0e0e4736"
        ),
    ]

    @Test(arguments: records.indices)
    func matchesJSONEncoder(index: Int) throws {
        let record = Self.records[index]
        let ours = record.jsonLine()
        let reference = try Self.encoderLine(record)
        #expect(ours == reference, "\(String(decoding: ours, as: UTF8.self))\n\(String(decoding: reference, as: UTF8.self))")
        #expect(try TraceRecord.decode(line: String(decoding: ours.dropLast(), as: UTF8.self)) == record)
    }

    @Test func durationsMatchJSONEncoder() throws {
        var values: [Double] = [0, 1, 10, 0.5, 1e-9, 1.5e-6, 0.001234, 59.999, 86_400, 1e15, 1e16, 123_456_789.987654321]
        var x = 0.000_001_7
        for _ in 0..<60 {
            values.append(x)
            x *= 1.93
        }
        for value in values {
            var record = Self.records[0]
            record.duration = value
            #expect(record.jsonLine() == (try Self.encoderLine(record)), "\(value)")
        }
    }
}
