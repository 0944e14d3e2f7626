import Foundation
public import GatewayCore
import NIOConcurrencyHelpers

/// Appends trace lines (and body files) to a size-rotated JSON Lines file from
/// the process's ``WriterThread``. `submit` never blocks nor waits, and does no
/// formatting: it takes the lock for an append and schedules the writer when
/// it is not already scheduled. The queue is bounded in records and in bytes
/// (captured bodies plus an estimate of each line), and what does not fit is
/// dropped and counted. A record and its body file are one queue item (both
/// written or both dropped); the body files of a trace file are deleted when
/// rotation deletes that file (see ``TraceFiles``).
///
/// On the writer thread a drain takes everything queued, formats it in order
/// (redaction, curl lines, JSON: see ``submit(estimatedBytes:format:)``), and
/// appends the lines with one `write(2)` per batch (split where rotation falls).
public final class TraceWriter: Sendable {
    /// What one queued record writes: its JSON line and, when its curl lines
    /// reference one, its body file (written first).
    public struct Entry: Sendable {
        /// The record's JSON line, newline-terminated.
        public var line: [UInt8]
        public var body: (path: String, bytes: [UInt8])?

        public init(line: [UInt8], body: (path: String, bytes: [UInt8])? = nil) {
            self.line = line
            self.body = body
        }

        public init(record: TraceRecord, body: (path: String, bytes: [UInt8])? = nil) {
            self.init(line: record.jsonLine(), body: body)
        }
    }

    enum Item: Sendable {
        /// A record built by the caller (tests, tools).
        case record(Entry, cost: Int)
        /// A record built on the writer thread from values captured on an event loop.
        case deferred(@Sendable () -> Entry, cost: Int)
        case flush(@Sendable () -> Void)
    }

    struct Queue {
        var items: [Item] = []
        /// Records in `items` (flush markers do not count).
        var records = 0
        /// Bytes of records queued or being written (given back once written).
        var bytes = 0
        var dropped = 0
        var written = 0
        var started: Bool
        /// On the thread's list (or being drained): a submit does not schedule again.
        var scheduled = false
    }

    public let file: String
    public let maxFileBytes: Int
    public let maxFiles: Int
    /// The absolute directory of the trace file (body files are referenced by absolute path).
    public let directory: String
    /// Body files go to `<directory>/bodies/` (stored: the event loop reads it per record).
    public let bodiesDirectory: String
    /// Most records waiting in the queue (`trace.buffer`).
    public let maxQueuedRecords: Int
    /// Most bytes waiting in the queue (records of up to 8 MiB bodies would
    /// otherwise add up to gigabytes behind a slow disk).
    public let maxQueuedBytes: Int
    public static let defaultMaxQueuedBytes = 64 << 20

    let queue: NIOLockedValueBox<Queue>
    let thread: WriterThread
    /// Touched only on the writer thread (by ``drainOnWriterThread()``).
    let sink: TraceFileSink
    /// Where each written record also goes (the admin page's recent exchanges), on the writer thread.
    let recent: RecentTraces?

    /// - Parameters:
    ///   - start: start writing now (tests pass false to fill the queue first).
    ///   - thread: the thread that formats and writes (tests pass their own to block it).
    ///   - recent: also keeps each written record there.
    public init(
        file: String, maxFileBytes: Int, maxFiles: Int, bufferRecords: Int,
        maxQueuedBytes: Int = TraceWriter.defaultMaxQueuedBytes, start: Bool = true, thread: WriterThread = .shared,
        recent: RecentTraces? = nil
    ) {
        self.recent = recent
        self.file = file
        self.maxQueuedBytes = maxQueuedBytes
        self.maxQueuedRecords = max(1, bufferRecords)
        self.maxFileBytes = max(1024, maxFileBytes)
        self.maxFiles = max(1, maxFiles)
        let parent = (file as NSString).deletingLastPathComponent
        let absolute = parent.hasPrefix("/") ? parent : (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(parent)
        let directory = (absolute as NSString).standardizingPath
        self.directory = directory
        self.bodiesDirectory = "\(directory)/bodies"
        self.thread = thread
        self.queue = NIOLockedValueBox(Queue(started: start))
        self.sink = TraceFileSink(file: file, maxFileBytes: self.maxFileBytes, maxFiles: self.maxFiles, bodiesDirectory: bodiesDirectory)
    }


    /// The absolute path of the body file of record `id`.
    public func bodyFilePath(id: String) -> String { TraceFiles.bodyFile(id: id, bodiesDirectory: bodiesDirectory) }

    /// Records dropped because the queue was full.
    public var droppedCount: Int { queue.withLockedValue { $0.dropped } }
    /// Records appended to the file.
    public var writtenCount: Int { queue.withLockedValue { $0.written } }

    /// Queues a built record, with the body file its curl lines reference
    /// (written first); false (and counted) when the queue is full: neither is written.
    @discardableResult
    public func submit(_ record: TraceRecord, body: (path: String, bytes: [UInt8])? = nil) -> Bool {
        let cost = record.estimatedLineBytes + (body?.bytes.count ?? 0)
        return enqueue(.record(Entry(record: record, body: body), cost: cost), cost: cost)
    }

    /// Queues a record that `format` builds on the writer thread, in submission
    /// order with every other record: the event loop only captures values
    /// (`format`'s context) and never formats. `estimatedBytes` (captured body
    /// plus an estimate of the line) counts against ``maxQueuedBytes``.
    /// False (and counted) when the queue is full: `format` is never called.
    @discardableResult
    public func submit(estimatedBytes: Int, format: @escaping @Sendable () -> Entry) -> Bool {
        enqueue(.deferred(format, cost: estimatedBytes), cost: estimatedBytes)
    }

    private func enqueue(_ item: Item, cost: Int) -> Bool {
        let (accepted, schedule) = queue.withLockedValue { q -> (Bool, Bool) in
            guard q.records < maxQueuedRecords, q.bytes + cost <= maxQueuedBytes else {
                q.dropped += 1
                return (false, false)
            }
            q.items.append(item)
            q.records += 1
            q.bytes += cost
            return (true, q.claimSchedule())
        }
        if schedule { thread.schedule(self) }
        return accepted
    }

    /// Waits until everything queued before it is written.
    public func flush() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let schedule = queue.withLockedValue { q -> Bool in
                q.items.append(.flush({ done.resume() }))
                return q.claimSchedule()
            }
            if schedule { thread.schedule(self) }
        }
    }

    /// Starts writing (once); what was queued before is written first.
    public func start() {
        let schedule = queue.withLockedValue { q -> Bool in
            q.started = true
            return !q.items.isEmpty && q.claimSchedule()
        }
        if schedule { thread.schedule(self) }
    }
}

extension TraceWriter.Queue {
    /// True once per drain: the caller schedules the writer.
    mutating func claimSchedule() -> Bool {
        guard started, !scheduled else { return false }
        scheduled = true
        return true
    }
}
