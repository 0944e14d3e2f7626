import Dispatch
import Glibc
import GatewayCore
import Logging
import NIOHTTP1
import Testing

/// Log lines leave the event loops as captured events (or exchange lines as
/// values) and reach the file on the writer thread: whole, in order, bounded
/// (the excess dropped and counted).
@Suite(.timeLimit(.minutes(1)))
struct LogLineQueueTests {
    /// Holds a writer thread until released, so that lines pile up in a queue.
    final class Blocker: WriterThreadWork, @unchecked Sendable {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        func drainOnWriterThread() {
            entered.signal()
            release.wait()
        }
    }

    /// Reads everything written to the pipe once its write end is closed.
    static func readAll(_ fd: Int32) -> String {
        var all: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count <= 0 { break }
            all += chunk[0..<count]
        }
        return String(decoding: all, as: UTF8.self)
    }

    @Test func linesFromSeveralThreadsArriveWholeAndInOrderPerThread() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let queue = LogLineQueue(fileDescriptor: fds[1], thread: WriterThread(name: "log-order"))
        let logger = Logger(label: "gateway") { GatewayLogHandler(label: $0, queue: queue, metadataProvider: nil) }
        // Read concurrently: the pipe holds only 64 KiB.
        let readEnd = fds[0]
        let reader = Task.detached { Self.readAll(readEnd) }
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    for i in 0..<500 { logger.info("line", metadata: ["t": "\(thread)", "i": "\(i)"]) }
                }
            }
        }
        queue.flush()
        close(fds[1])
        let lines = await reader.value.split(separator: "\n")
        #expect(lines.count == 2000)
        for thread in 0..<4 {
            let indices = lines.filter { $0.contains(" t=\(thread) ") }.compactMap { line in
                line.firstMatch(of: /\si=(\d+)\s/).map { Int($0.1)! }
            }
            #expect(indices == Array(0..<500), "thread \(thread)'s lines are whole and in order")
        }
    }

    @Test func beyondTheBoundLinesAreDroppedCountedAndReported() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let thread = WriterThread(name: "log-blocked")
        let blocker = Blocker()
        thread.schedule(blocker)
        blocker.entered.wait()
        let queue = LogLineQueue(fileDescriptor: fds[1], thread: thread, maxPending: 10)
        let logger = Logger(label: "gateway") { GatewayLogHandler(label: $0, queue: queue, metadataProvider: nil) }
        for i in 0..<15 { logger.info("n\(i)") }
        queue.flush()
        blocker.release.signal()
        close(fds[1])
        let lines = Self.readAll(fds[0]).split(separator: "\n")
        #expect(lines.count == 11)
        #expect(lines.prefix(10).map { String($0.split(separator: " ").last!) } == (0..<10).map { "n\($0)" })
        #expect(lines.last?.contains("dropped=5") == true)
        #expect(lines.last?.contains("log lines dropped") == true)
    }

    @Test func exchangeLinesKeepTheirPlaceAmongEvents() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let queue = LogLineQueue(fileDescriptor: fds[1], thread: WriterThread(name: "log-mixed"))
        let logger = Logger(label: "gateway") { GatewayLogHandler(label: $0, queue: queue, metadataProvider: nil) }
        let sink = try #require(ExchangeLineSink(logger))
        // 60 short lines: well within the pipe's 64 KiB, read after the flush.
        for i in 0..<60 {
            if i % 3 == 0 {
                sink.log(
                    ExchangeLine(
                        requestID: "r\(i)", method: .GET, target: .routed(scheme: .http, host: "h", port: 80, target: "/\(i)"), status: 200,
                        milliseconds: 1.5, bytesIn: 0, bytesOut: i, upstream: nil, error: nil, trace: nil, source: "GatewayListener"
                    )
                )
            } else {
                logger.info("event \(i)")
            }
        }
        queue.flush()
        close(fds[1])
        let lines = Self.readAll(fds[0]).split(separator: "\n")
        #expect(lines.count == 60)
        for (i, line) in lines.enumerated() {
            let expected = i % 3 == 0
                ? " info gateway: bytes_in=0 bytes_out=\(i) ms=1.5 request=r\(i) status=200 [GatewayListener] GET http://h/\(i) 200"
                : " info gateway: [GatewayCoreTests] event \(i)"
            #expect(line.hasSuffix(expected), "line \(i): \(line)")
        }
    }
}
