import Foundation
import GatewayObservability
import Testing
import GatewayTesting

/// The admin page's recent exchanges: a bounded ring the trace writer thread feeds.
@Suite("Recent traces", .timeLimit(.minutes(1)))
struct RecentTracesTests {
    static func record(_ id: String) -> TraceRecord {
        TraceRecord(
            id: id, time: "t", client: "c", upstream: nil, method: "GET", endpoint: "h/p", attempts: [], status: 200, error: nil,
            requestBytes: 0, responseBytes: 0, duration: 0.001, curl: "curl 'http://h/p'", curlDirect: ""
        )
    }

    @Test func keepsTheLastRecordsOldestFirst() {
        let recent = RecentTraces(capacity: 3)
        for i in 0..<7 { recent.append(Self.record("\(i)"), bodyFile: nil) }
        #expect(recent.items.map(\.record.id) == ["4", "5", "6"])
    }

    @Test func keepsOnlySmallBodies() {
        let recent = RecentTraces(capacity: 2)
        recent.append(Self.record("small"), bodyFile: ("/b/small.bin", [1, 2]))
        recent.append(Self.record("large"), bodyFile: ("/b/large.bin", [UInt8](repeating: 0, count: RecentTraces.maxBodyBytes + 1)))
        #expect(recent.items[0].bodyFile?.bytes == [1, 2])
        #expect(recent.items[1].bodyFile == nil)
    }

    /// Fed by the writer thread as it writes (records dropped from a full queue never show).
    @Test func theWriterFeedsIt() async throws {
        let dir = TestScratch.path("gateway-recent")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let recent = RecentTraces(capacity: 10)
        let writer = TraceWriter(file: "\(dir)/trace.jsonl", maxFileBytes: 1 << 20, maxFiles: 2, bufferRecords: 100, recent: recent)
        writer.submit(Self.record("a"))
        writer.submit(Self.record("b"), body: ("\(dir)/bodies/b.bin", [9]))
        await writer.flush()
        #expect(recent.items.map(\.record.id) == ["a", "b"])
        #expect(recent.items[1].bodyFile?.bytes == [9])
        let har = try JSONSerialization.jsonObject(with: Data(try recent.harJSON())) as? [String: Any]
        #expect(((har?["log"] as? [String: Any])?["entries"] as? [Any])?.count == 2)
    }
}
