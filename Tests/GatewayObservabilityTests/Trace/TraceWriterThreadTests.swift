#if canImport(Glibc)
import Glibc
#endif
import Foundation
import GatewayConfig
import GatewayCore
import NIOConcurrencyHelpers
import Testing
@testable import GatewayObservability

/// The writer thread: order kept, queue bounded while the thread is busy,
/// everything queued written by a flush, and formatting done on the writer
/// thread, never on the submitting one.
@Suite("Trace writer thread", .timeLimit(.minutes(1)))
struct TraceWriterThreadTests {
    /// A gate a test opens; `wait` gives up after 10 s so a failing test cannot hang.
    final class Gate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        func open() { semaphore.signal() }
        @discardableResult
        func wait() -> Bool { semaphore.wait(timeout: .now() + 10) == .success }
    }

    static func lines(_ file: String) throws -> [String] {
        try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map { try TraceRecord.decode(line: $0).id }
    }

    @Test func recordsKeepSubmissionOrderAcrossBothKindsOfSubmit() async throws {
        let (dir, file) = try TraceWriterTests.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = TraceWriter(file: file, maxFileBytes: 1 << 20, maxFiles: 1, bufferRecords: 1000)
        var expected: [String] = []
        for i in 0..<300 {
            let id = "r\(i)"
            expected.append(id)
            if i % 2 == 0 {
                #expect(writer.submit(TraceWriterTests.record(id)))
            } else {
                #expect(writer.submit(estimatedBytes: 100) { TraceWriter.Entry(record: TraceWriterTests.record(id)) })
            }
        }
        await writer.flush()
        #expect(try Self.lines(file) == expected)
        #expect(writer.writtenCount == 300)
    }

    /// While the thread is busy formatting one record, the queue fills up to
    /// `buffer` records; the rest is dropped and counted, and never formatted.
    @Test func aBusyWriterBoundsTheQueueAndDropsTheRest() async throws {
        let (dir, file) = try TraceWriterTests.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = TraceWriter(file: file, maxFileBytes: 1 << 20, maxFiles: 1, bufferRecords: 4, thread: WriterThread(name: "test-blocked"))
        let entered = Gate()
        let release = Gate()
        let formattedDropped = NIOLockedValueBox(false)
        writer.submit(estimatedBytes: 10) {
            entered.open()
            release.wait()
            return TraceWriter.Entry(record: TraceWriterTests.record("blocker"))
        }
        #expect(entered.wait())
        var accepted: [String] = []
        for i in 0..<10 {
            let id = "q\(i)"
            if writer.submit(estimatedBytes: 10, format: {
                if i >= 4 { formattedDropped.withLockedValue { $0 = true } }
                return TraceWriter.Entry(record: TraceWriterTests.record(id))
            }) {
                accepted.append(id)
            }
        }
        #expect(accepted == ["q0", "q1", "q2", "q3"])
        #expect(writer.droppedCount == 6)
        release.open()
        await writer.flush()
        #expect(try Self.lines(file) == ["blocker"] + accepted)
        #expect(writer.writtenCount == 5)
        #expect(!formattedDropped.withLockedValue { $0 })
        // The budget is back: a new record fits again.
        #expect(writer.submit(TraceWriterTests.record("after")))
        await writer.flush()
        #expect(writer.droppedCount == 6)
    }

    /// One batch that crosses rotation boundaries leaves the same files as one record per batch.
    @Test func aBatchRotatesWhereSingleRecordsWould() async throws {
        let (dir, _) = try TraceWriterTests.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let batched = TraceWriter(file: "\(dir)/batched.jsonl", maxFileBytes: 1024, maxFiles: 3, bufferRecords: 100, start: false)
        let single = TraceWriter(file: "\(dir)/single.jsonl", maxFileBytes: 1024, maxFiles: 3, bufferRecords: 100)
        for i in 0..<20 {
            batched.submit(TraceWriterTests.record("r\(i)", padding: 300))
            single.submit(TraceWriterTests.record("r\(i)", padding: 300))
            await single.flush()
        }
        batched.start()
        await batched.flush()
        #expect(batched.writtenCount == 20)
        for suffix in ["", ".1", ".2", ".3"] {
            let a = FileManager.default.contents(atPath: "\(dir)/batched.jsonl\(suffix)")
            let b = FileManager.default.contents(atPath: "\(dir)/single.jsonl\(suffix)")
            #expect(a != nil && a == b, "file\(suffix)")
        }
    }

    /// Shutdown: the registry's flush returns once every record queued before it is in its file.
    @Test func registryFlushWritesEverythingQueued() async throws {
        let (dir, _) = try TraceWriterTests.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let registry = TraceWriterRegistry()
        let files = ["\(dir)/a.jsonl", "\(dir)/b.jsonl"]
        for file in files {
            let writer = registry.writer(for: TraceConfig(file: file))
            for i in 0..<50 { writer.submit(TraceWriterTests.record("\(file.suffix(7))-\(i)")) }
        }
        await registry.flush()
        for file in files {
            #expect(try Self.lines(file).count == 50)
        }
        #expect(registry.droppedCount == 0)
    }

    /// The submitting thread only queues: every format closure runs on the one writer thread.
    @Test func formattingRunsOnTheWriterThread() async throws {
        let (dir, file) = try TraceWriterTests.tempFile()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = TraceWriter(file: file, maxFileBytes: 1 << 20, maxFiles: 1, bufferRecords: 10)
        let formattedOn = NIOLockedValueBox<[pthread_t]>([])
        let submitter = pthread_self()
        for i in 0..<5 {
            writer.submit(estimatedBytes: 10) {
                formattedOn.withLockedValue { $0.append(pthread_self()) }
                return TraceWriter.Entry(record: TraceWriterTests.record("x\(i)"))
            }
        }
        await writer.flush()
        let threads = formattedOn.withLockedValue { $0 }
        #expect(threads.count == 5)
        #expect(threads.allSatisfy { pthread_equal($0, submitter) == 0 })
        #expect(threads.allSatisfy { pthread_equal($0, threads[0]) != 0 }, "one writer thread")
    }
}
