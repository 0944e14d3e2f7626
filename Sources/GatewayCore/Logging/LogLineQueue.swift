#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOConcurrencyHelpers

/// Log lines on their way to a file descriptor (standard error): the event
/// loops only capture each event, or an exchange's line as values (a few
/// retains, no formatting, no syscall);
/// the ``WriterThread`` formats the queued lines and writes them with one
/// `write(2)` per batch, in the order they were logged.
///
/// Bounded: beyond `maxPending` lines waiting, new ones are dropped and
/// counted, and the next batch says how many (the loops never block on a slow
/// or full stderr). ``flush()`` writes what is queued on the caller's thread;
/// it runs at process exit (`atexit`), so the last lines before an exit are
/// never lost.
public final class LogLineQueue: WriterThreadWork, @unchecked Sendable {
    /// One captured line, formatted later on the writer thread; `second` is
    /// when it was logged (seconds since 1970), for its timestamp.
    enum Line: Sendable {
        /// A swift-log event, with its handler's label and metadata (and the provider's) when it was logged.
        case event(LogEvent, label: String, metadata: Logger.Metadata, provided: Logger.Metadata?, second: Int)
        /// An exchange's info line, as values (``ExchangeLineSink``).
        case exchange(ExchangeLine, label: String, second: Int)

        var second: Int {
            switch self {
            case .event(_, _, _, _, let logged), .exchange(_, _, let logged): logged
            }
        }
    }

    /// The process's standard error.
    public static let standardError = LogLineQueue(fileDescriptor: 2, thread: .shared)

    /// Lines waiting at most, by default (about 3 MiB of formatted text).
    public static let defaultMaxPending = 16_384

    private let fileDescriptor: Int32
    private let maxPending: Int
    private let thread: WriterThread
    // `@unchecked Sendable`: `pending`, `scheduled` and `dropped` only under `lock`;
    // `batch` and the output buffer only under `drainLock` (one drain at a time, in order).
    private let lock = NIOLock()
    private var pending: [Line] = []
    private var scheduled = false
    private var dropped = 0
    private let drainLock = NIOLock()
    private var batch: [Line] = []

    public init(fileDescriptor: Int32, thread: WriterThread, maxPending: Int = LogLineQueue.defaultMaxPending) {
        self.fileDescriptor = fileDescriptor
        self.thread = thread
        self.maxPending = maxPending
        Self.registerExitFlush()
    }

    func enqueue(_ line: Line) {
        let schedule: Bool = lock.withLock {
            guard pending.count < maxPending else {
                dropped += 1
                return false
            }
            pending.append(line)
            defer { scheduled = true }
            return !scheduled
        }
        if schedule { thread.schedule(self) }
    }

    public func drainOnWriterThread() {
        flush()
    }

    /// Formats and writes every line queued so far, on the caller's thread.
    public func flush() {
        drainLock.withLock {
            let lost: Int = lock.withLock {
                swap(&pending, &batch)
                scheduled = false
                defer { dropped = 0 }
                return dropped
            }
            guard !batch.isEmpty || lost > 0 else { return }
            var text: [UInt8] = []
            text.reserveCapacity(batch.count * 160)
            // An event's line is made as a string (``GatewayLogHandler``), in this scratch one.
            var eventLine = ""
            // Per batch, not per line: the metadata's scratch array, and the
            // timestamp (looked up again only when the second changes).
            var pairs: [GatewayLogHandler.MetadataPair] = []
            pairs.reserveCapacity(16)
            var second = Int.min
            var timestamp = ""
            for line in batch {
                if line.second != second {
                    second = line.second
                    timestamp = LogTimestamp.text(forSecond: second)
                }
                switch line {
                case .event(let event, let label, let metadata, let provided, _):
                    GatewayLogHandler.append(
                        event, label: label, metadata: metadata, provided: provided, timestamp: timestamp, pairs: &pairs, to: &eventLine
                    )
                    text.append(contentsOf: eventLine.utf8)
                    eventLine.removeAll(keepingCapacity: true)
                case .exchange(let exchange, let label, _):
                    exchange.append(label: label, timestamp: timestamp, to: &text)
                }
            }
            batch.removeAll(keepingCapacity: true)
            if lost > 0 {
                text.append(
                    contentsOf: "\(LogTimestamp.now()) warning gateway: dropped=\(lost) [GatewayCore] log lines dropped: standard error did not keep up\n".utf8
                )
            }
            text.withUnsafeBufferPointer { Self.writeAll($0, to: fileDescriptor) }
        }
    }

    private static let exitFlush: Void = {
        atexit { LogLineQueue.standardError.flush() }
    }()

    private static func registerExitFlush() {
        _ = exitFlush
    }

    private static func writeAll(_ bytes: UnsafeBufferPointer<UInt8>, to fileDescriptor: Int32) {
        guard var base = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = write(fileDescriptor, base, remaining)
            if written < 0 {
                switch errno {
                case EINTR:
                    continue
                case EAGAIN:
                    // A non-blocking stderr that is full: wait for room (only the writer thread waits).
                    var ready = pollfd(fd: fileDescriptor, events: Int16(POLLOUT), revents: 0)
                    if poll(&ready, 1, 1000) > 0 { continue }
                    return
                default:
                    return  // nowhere to report a failing log stream
                }
            }
            base += written
            remaining -= written
        }
    }
}
