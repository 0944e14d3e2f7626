import Foundation
@testable import GatewayObservability
import Testing

/// Reading every rotated trace file, body file retention, the bound `-x` address.
@Suite("Trace files and body retention", .timeLimit(.minutes(1)))
struct TraceFilesTests {
    static func ids(_ records: [TraceRecord]) -> [Int] { records.compactMap { Int($0.id.dropFirst()) } }

    @Test func recordsComeFromEveryRotatedFileOldestFirst() async throws {
        let (dir, file) = try TraceWriterTests.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = TraceWriter(file: file, maxFileBytes: 1024, maxFiles: 3, bufferRecords: 100)
        for i in 0..<20 {
            writer.submit(TraceWriterTests.record("r\(i)", padding: 300))
            await writer.flush()
        }
        // Not rotated copies of this trace: ignored.
        for stray in ["trace.jsonl.bak", "trace.jsonl.1x", "trace.jsonl.0", "other.jsonl.1"] {
            _ = FileManager.default.createFile(atPath: "\(dir)/\(stray)", contents: Data(TraceWriterTests.record("stray").jsonLine()))
        }
        #expect(TraceFiles.existing(file) == [file + ".3", file + ".2", file + ".1", file])
        let records = TraceFiles.records(file)
        let ids = Self.ids(records)
        #expect(ids.last == 19)
        #expect(ids == Array(ids.sorted()), "oldest first: \(ids)")
        #expect(ids == Array((ids.first ?? 0)...19), "no gaps: \(ids)")
        let newestTwo = TraceFiles.records(inFile: file + ".1").count + TraceFiles.records(inFile: file).count
        #expect(records.count > newestTwo, "reads past file.1")
        #expect(!records.contains { $0.id == "stray" })
    }

    @Test func bodyFilesAreDeletedWithTheTraceFileThatRotatesOut() async throws {
        let (dir, file) = try TraceWriterTests.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = TraceWriter(file: file, maxFileBytes: 1024, maxFiles: 1, bufferRecords: 100)
        for i in 0..<12 {
            let id = "r\(i)"
            writer.submit(TraceWriterTests.record(id, padding: 300), body: (writer.bodyFilePath(id: id), Array(repeating: UInt8(i), count: 100)))
            await writer.flush()
        }
        let fm = FileManager.default
        #expect(fm.fileExists(atPath: file + ".1"))
        let kept = Set(TraceFiles.records(file).map(\.id))
        #expect(!kept.isEmpty && kept.count < 12)
        let bodies = Set(try fm.contentsOfDirectory(atPath: writer.bodiesDirectory))
        #expect(bodies == Set(kept.map { "\($0).bin" }), "bodies \(bodies.sorted()) vs records \(kept.sorted())")
        #expect(fm.contents(atPath: writer.bodyFilePath(id: "r11")) == Data(repeating: 11, count: 100))
    }

    /// Rotation finds record ids by a byte scan of the JSON lines, not by decoding
    /// them: an `"id":"…"` inside a string (escaped there) is not taken for one.
    @Test func recordIDsAreFoundInTheLinesWithoutDecodingThem() {
        var tricky = TraceWriterTests.record("r2")
        tricky.curl = #"curl -d '{"id":"not-a-record"}' http://h/p"#
        let bytes = TraceWriterTests.record("r1").jsonLine() + tricky.jsonLine() + Array("not json\n".utf8) + TraceWriterTests.record("r3").jsonLine()
        #expect(TraceFiles.recordIDs(in: bytes) == ["r1", "r2", "r3"])
    }

    @Test func aDroppedRecordDropsItsBodyFile() async throws {
        let (dir, file) = try TraceWriterTests.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = TraceWriter(file: file, maxFileBytes: 1 << 20, maxFiles: 1, bufferRecords: 1, start: false)
        #expect(writer.submit(TraceWriterTests.record("a"), body: (writer.bodyFilePath(id: "a"), [1])))
        #expect(!writer.submit(TraceWriterTests.record("b"), body: (writer.bodyFilePath(id: "b"), [2])))
        writer.start()
        for _ in 0..<200 where writer.writtenCount < 1 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(FileManager.default.fileExists(atPath: writer.bodyFilePath(id: "a")))
        #expect(!FileManager.default.fileExists(atPath: writer.bodyFilePath(id: "b")))
        #expect(writer.droppedCount == 1)
    }

    @Test func bodyFilePathsAreAbsolute() {
        let writer = TraceWriter(file: "state/trace.jsonl", maxFileBytes: 1 << 20, maxFiles: 1, bufferRecords: 1, start: false)
        let cwd = FileManager.default.currentDirectoryPath
        #expect(writer.bodyFilePath(id: "x") == (cwd as NSString).appendingPathComponent("state/bodies/x.bin"))
        #expect(TraceWriter(file: "trace.jsonl", maxFileBytes: 1, maxFiles: 1, bufferRecords: 1, start: false).bodyFilePath(id: "y") == cwd + "/bodies/y.bin")
    }

    @Test func boundProxyURL() {
        #expect(TraceProxyAddress.url(host: "0.0.0.0", port: 41234) == "http://127.0.0.1:41234")
        #expect(TraceProxyAddress.url(host: "::", port: 1) == "http://127.0.0.1:1")
        #expect(TraceProxyAddress.url(host: "::1", port: 8080) == "http://[::1]:8080")
        let address = TraceProxyAddress()
        #expect(address.url == nil)
        address.set(host: "127.0.0.1", port: 5555)
        #expect(address.url == "http://127.0.0.1:5555")
    }
}
