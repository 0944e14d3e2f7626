import Foundation
import NIOConcurrencyHelpers

/// Appends trace lines (and body files) to a size-rotated JSON Lines file from
/// its own task. `submit` never blocks nor waits: the queue is bounded in
/// records and in bytes (lines plus body files), and what does not fit is
/// dropped and counted. A record and its body file are
/// one queue item (both written or both dropped); the body files of a trace
/// file are deleted when rotation deletes that file (see ``TraceFiles``).
public final class TraceWriter: Sendable {
    enum Item: Sendable {
        case line([UInt8], body: (path: String, bytes: [UInt8])?)
        case flush(@Sendable () -> Void)
    }

    public let file: String
    public let maxFileBytes: Int
    public let maxFiles: Int
    /// The absolute directory of the trace file (body files are referenced by absolute path).
    public let directory: String
    private let continuation: AsyncStream<Item>.Continuation
    private let stream: NIOLockedValueBox<AsyncStream<Item>?>
    private let counters = NIOLockedValueBox((dropped: 0, written: 0, queuedBytes: 0))
    /// Most bytes waiting in the queue (records of up to 8 MiB bodies would
    /// otherwise add up to gigabytes behind a slow disk).
    public let maxQueuedBytes: Int
    public static let defaultMaxQueuedBytes = 64 << 20

    /// - Parameter start: start the writer task now (tests pass false to fill the queue first).
    public init(
        file: String, maxFileBytes: Int, maxFiles: Int, bufferRecords: Int,
        maxQueuedBytes: Int = TraceWriter.defaultMaxQueuedBytes, start: Bool = true
    ) {
        self.file = file
        self.maxQueuedBytes = maxQueuedBytes
        self.maxFileBytes = max(1024, maxFileBytes)
        self.maxFiles = max(1, maxFiles)
        let parent = (file as NSString).deletingLastPathComponent
        let absolute = parent.hasPrefix("/") ? parent : (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(parent)
        self.directory = (absolute as NSString).standardizingPath
        let (stream, continuation) = AsyncStream<Item>.makeStream(bufferingPolicy: .bufferingOldest(max(1, bufferRecords)))
        self.continuation = continuation
        self.stream = NIOLockedValueBox(stream)
        if start { self.start() }
    }

    deinit { continuation.finish() }

    /// Body files go to `<directory>/bodies/`.
    public var bodiesDirectory: String { "\(directory)/bodies" }

    /// The absolute path of the body file of record `id`.
    public func bodyFilePath(id: String) -> String { TraceFiles.bodyFile(id: id, bodiesDirectory: bodiesDirectory) }

    /// Records dropped because the queue was full.
    public var droppedCount: Int { counters.withLockedValue { $0.dropped } }
    /// Records appended to the file.
    public var writtenCount: Int { counters.withLockedValue { $0.written } }

    /// Queues a line, with the body file its curl lines reference (written
    /// first); false (and counted) when the queue is full: neither is written.
    @discardableResult
    public func submit(_ record: TraceRecord, body: (path: String, bytes: [UInt8])? = nil) -> Bool {
        let line = record.jsonLine()
        let size = line.count + (body?.bytes.count ?? 0)
        let reserved = counters.withLockedValue { c -> Bool in
            guard c.queuedBytes + size <= maxQueuedBytes else {
                c.dropped += 1
                return false
            }
            c.queuedBytes += size
            return true
        }
        guard reserved else { return false }
        switch continuation.yield(.line(line, body: body)) {
        case .enqueued: return true
        default:
            counters.withLockedValue { $0.dropped += 1; $0.queuedBytes -= size }
            return false
        }
    }

    /// Waits until everything queued before it is written.
    public func flush() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            if case .enqueued = continuation.yield(.flush({ done.resume() })) { return }
            done.resume()
        }
    }

    /// Starts the writer task (once).
    public func start() {
        guard let stream = stream.withLockedValue({ s -> AsyncStream<Item>? in defer { s = nil }; return s }) else { return }
        let sink = FileSink(file: file, maxFileBytes: maxFileBytes, maxFiles: maxFiles, bodiesDirectory: bodiesDirectory)
        let counters = self.counters
        Task.detached {
            for await item in stream {
                switch item {
                case .line(let bytes, let body):
                    if let body { FileSink.writeFile(path: body.path, bytes: body.bytes) }
                    let written = sink.append(bytes)
                    counters.withLockedValue { c in
                        c.queuedBytes -= bytes.count + (body?.bytes.count ?? 0)
                        if written { c.written += 1 }
                    }
                case .flush(let done):
                    done()
                }
            }
        }
    }
}

/// The file side of ``TraceWriter``: append, rotate `file` → `file.1` → ... → `file.<maxFiles>`;
/// the file rotated out takes its records' body files with it.
final class FileSink: @unchecked Sendable {
    let file: String
    let maxFileBytes: Int
    let maxFiles: Int
    let bodiesDirectory: String
    private var size: Int

    init(file: String, maxFileBytes: Int, maxFiles: Int, bodiesDirectory: String) {
        self.file = file
        self.maxFileBytes = maxFileBytes
        self.maxFiles = maxFiles
        self.bodiesDirectory = bodiesDirectory
        let attributes = try? FileManager.default.attributesOfItem(atPath: file)
        size = (attributes?[.size] as? NSNumber)?.intValue ?? 0
    }

    func append(_ bytes: [UInt8]) -> Bool {
        if size > 0, size + bytes.count > maxFileBytes { rotate() }
        let fm = FileManager.default
        if !fm.fileExists(atPath: file) {
            try? fm.createDirectory(atPath: (file as NSString).deletingLastPathComponent.isEmpty ? "." : (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            guard fm.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o600]) else { return false }
            size = 0
        }
        guard let handle = FileHandle(forWritingAtPath: file) else { return false }
        defer { try? handle.close() }
        do {
            try handle.seekToEnd()
            try handle.write(contentsOf: bytes)
        } catch {
            return false
        }
        size += bytes.count
        return true
    }

    private func rotate() {
        let fm = FileManager.default
        let oldest = "\(file).\(maxFiles)"
        if fm.fileExists(atPath: oldest) {
            TraceFiles.removeBodies(of: oldest, bodiesDirectory: bodiesDirectory)
            try? fm.removeItem(atPath: oldest)
        }
        if maxFiles > 1 {
            for index in stride(from: maxFiles - 1, through: 1, by: -1) where fm.fileExists(atPath: "\(file).\(index)") {
                try? fm.moveItem(atPath: "\(file).\(index)", toPath: "\(file).\(index + 1)")
            }
        }
        try? fm.moveItem(atPath: file, toPath: "\(file).1")
        size = 0
    }

    static func writeFile(path: String, bytes: [UInt8]) {
        let fm = FileManager.default
        try? fm.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = fm.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
    }
}
