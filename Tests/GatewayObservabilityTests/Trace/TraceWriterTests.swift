import Foundation
import GatewayObservability
import Testing
import GatewayTesting

@Suite("Trace writer", .timeLimit(.minutes(1)))
struct TraceWriterTests {
    static func record(_ id: String, padding: Int = 0) -> TraceRecord {
        TraceRecord(id: id, time: "t", client: "c", upstream: nil, method: "GET", endpoint: "h/p", attempts: [], status: 200, error: nil,
                    requestBytes: 0, responseBytes: 0, duration: 0, curl: "curl " + String(repeating: "x", count: padding), curlDirect: "curl")
    }

    static func tempFile() throws -> (dir: String, file: String) {
        let dir = TestScratch.path("trace-writer")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return (dir, dir + "/trace.jsonl")
    }

    @Test func fullQueueDropsAndCounts() async throws {
        let (dir, file) = try Self.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = TraceWriter(file: file, maxFileBytes: 1 << 20, maxFiles: 2, bufferRecords: 4, start: false)
        var accepted = 0
        for i in 0..<10 where writer.submit(Self.record("r\(i)")) { accepted += 1 }
        #expect(accepted == 4)
        #expect(writer.droppedCount == 6)
        writer.start()
        for _ in 0..<200 where writer.writtenCount < 4 { try await Task.sleep(for: .milliseconds(10)) }
        await writer.flush()
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 4)
        #expect(try TraceRecord.decode(line: lines[0]).id == "r0")
        #expect(writer.writtenCount == 4)
    }

    /// Large bodies fill the byte budget before the record count: the rest is dropped and counted.
    @Test func queuedBytesAreBounded() async throws {
        let (dir, file) = try Self.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = TraceWriter(file: file, maxFileBytes: 1 << 20, maxFiles: 2, bufferRecords: 100, maxQueuedBytes: 10_000, start: false)
        var accepted = 0
        for i in 0..<10 where writer.submit(Self.record("r\(i)"), body: (writer.bodyFilePath(id: "r\(i)"), Array(repeating: 7, count: 4_000))) {
            accepted += 1
        }
        #expect(accepted == 2)
        #expect(writer.droppedCount == 8)
        writer.start()
        await writer.flush()
        // Written items give their bytes back to the budget.
        #expect(writer.submit(Self.record("later"), body: (writer.bodyFilePath(id: "later"), Array(repeating: 7, count: 4_000))))
        await writer.flush()
        #expect(writer.writtenCount == 3)
    }

    @Test func rotatesBySizeKeepingMaxFiles() async throws {
        let (dir, file) = try Self.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = TraceWriter(file: file, maxFileBytes: 1024, maxFiles: 2, bufferRecords: 100)
        for i in 0..<20 {
            writer.submit(Self.record("r\(i)", padding: 300))
            await writer.flush()
        }
        let fm = FileManager.default
        #expect(fm.fileExists(atPath: file + ".1"))
        #expect(fm.fileExists(atPath: file + ".2"))
        #expect(!fm.fileExists(atPath: file + ".3"))
        for path in [file, file + ".1", file + ".2"] {
            let size = (try fm.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
            #expect(size <= 1024)
        }
        let last = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").last
        #expect(try TraceRecord.decode(line: last ?? "").id == "r19")
    }

    /// The file stays open between batches, but a file moved away (logrotate)
    /// or removed is noticed at the next batch: its records go to a new file at the path.
    @Test func aFileMovedAwayOrRemovedIsOpenedAgainAtThePath() async throws {
        let (dir, file) = try Self.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = TraceWriter(file: file, maxFileBytes: 1 << 20, maxFiles: 2, bufferRecords: 100)
        func ids(_ path: String) throws -> [String] {
            try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { try TraceRecord.decode(line: $0).id }
        }
        writer.submit(Self.record("first"))
        await writer.flush()
        try FileManager.default.moveItem(atPath: file, toPath: dir + "/rotated.jsonl")
        writer.submit(Self.record("after-move"))
        await writer.flush()
        #expect(try ids(dir + "/rotated.jsonl") == ["first"])
        #expect(try ids(file) == ["after-move"])

        try FileManager.default.removeItem(atPath: file)
        writer.submit(Self.record("after-remove"))
        writer.submit(Self.record("same-batch"))
        await writer.flush()
        #expect(try ids(file) == ["after-remove", "same-batch"])

        // logrotate's `create`: moved away and a new empty file put at the path.
        try FileManager.default.moveItem(atPath: file, toPath: dir + "/rotated.2.jsonl")
        #expect(FileManager.default.createFile(atPath: file, contents: nil))
        writer.submit(Self.record("after-create"))
        await writer.flush()
        #expect(try ids(dir + "/rotated.2.jsonl") == ["after-remove", "same-batch"])
        #expect(try ids(file) == ["after-create"])
    }
}
