import Foundation
@testable import GatewayObservability
import GatewayTesting
import Testing

/// Trace files hold request bodies and headers: the trace file and its body
/// files are 0600 from their first byte, the trace directory and `bodies/`
/// are created 0700, and a symlink planted at the trace file is not followed.
/// Written with the umask at 0, so a mode left to the usual umask would show
/// (the first version made `bodies/` 0755 and each body file 0644 until a chmod).
@Suite("Trace file permissions", .timeLimit(.minutes(1)))
struct TraceFilePermissionsTests {
    @Test func bodyFilesAre0600InABodiesDirectoryMade0700() throws {
        let (dir, _) = try TraceWriterTests.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = TraceWriter(file: "\(dir)/state/trace.jsonl", maxFileBytes: 1 << 20, maxFiles: 1, bufferRecords: 1, start: false)
        let body = writer.bodyFilePath(id: "r1")
        FileModes.withUmask(0) {
            TraceFileSink.writeFile(path: body, bytes: Array("password=hunter2".utf8))
        }
        #expect(FileModes.permissions(body) == 0o600)
        #expect(FileModes.permissions(writer.bodiesDirectory) == 0o700)
        #expect(FileModes.permissions("\(dir)/state") == 0o700, "the trace directory (here state_dir), made for the body file")
        #expect(FileManager.default.contents(atPath: body) == Data("password=hunter2".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: writer.bodiesDirectory) == ["r1.bin"], "no temporary file left")
    }

    @Test func theTraceFileIs0600InADirectoryMade0700() throws {
        let (dir, _) = try TraceWriterTests.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = "\(dir)/state/traces/trace.jsonl"
        let sink = TraceFileSink(file: file, maxFileBytes: 1 << 20, maxFiles: 1, bodiesDirectory: "\(dir)/state/traces/bodies")
        FileModes.withUmask(0) {
            sink.append(TraceWriterTests.record("r1").jsonLine())
            sink.commit()
        }
        #expect(sink.takeWrittenLines() == 1)
        #expect(FileModes.permissions(file) == 0o600)
        #expect(FileModes.permissions("\(dir)/state/traces") == 0o700)
        #expect(FileModes.permissions("\(dir)/state") == 0o700, "missing parents too")
    }

    /// A symlink at the trace file's path (another user's, in a shared
    /// directory) is not appended through: the records are not written.
    @Test func aSymlinkAtTheTraceFileIsNotFollowed() throws {
        let (dir, file) = try TraceWriterTests.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let victim = "\(dir)/victim"
        try Data("original\n".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: victim)
        let sink = TraceFileSink(file: file, maxFileBytes: 1 << 20, maxFiles: 1, bodiesDirectory: "\(dir)/bodies")
        sink.append(TraceWriterTests.record("r1").jsonLine())
        sink.commit()
        #expect(sink.takeWrittenLines() == 0)
        #expect(FileManager.default.contents(atPath: victim) == Data("original\n".utf8))
        #expect(FileModes.isSymbolicLink(file))
    }
}
