import Foundation
public import GatewayConfig
public import GatewayCore
public import Logging
import Synchronization

/// The HAR file of `record:` (one per path, long-lived: a config reload keeps
/// its entries): each recorded exchange is redacted and appended on a serial
/// queue off the event loops, and the file is rewritten whole, atomically
/// (``PrivateFile/write(_:to:permissions:durable:)``: a new 0600 file renamed
/// over the old), so a reader (`replay`, a HAR viewer) never sees half a file.
/// Each run starts the file anew. Entries beyond ``maxEntries`` are dropped
/// (and said so once in the log): a recording is for a session, not a day.
public final class HARRecorder: Sendable {
    public static let maxEntries = 10_000

    public let path: String
    private let logger: Logger
    private let queue: DispatchQueue
    private let state = Mutex(State())

    private struct State {
        var entries: [HARLog.Entry] = []
        var redactor: TraceRedactor?
        var runtimeSecrets: (any RuntimeSecretSource)?
        var dropped = 0
    }

    init(path: String, logger: Logger) {
        self.path = path
        self.logger = logger
        queue = DispatchQueue(label: "gateway.record.\(path)")
    }

    /// The redaction of the current config (set on each config load).
    func use(redactor: TraceRedactor, runtimeSecrets: (any RuntimeSecretSource)?) {
        state.withLock { s in
            s.redactor = redactor
            s.runtimeSecrets = runtimeSecrets
        }
    }

    /// Queues `exchange`: redacted, appended and written on the recorder's queue.
    func append(_ exchange: RecordedExchange) {
        queue.async { self.write(exchange) }
    }

    /// Waits until every queued exchange is in the file (tests, shutdown).
    public func flush() {
        queue.sync {}
    }

    public var entryCount: Int { state.withLock { $0.entries.count } }

    private func write(_ exchange: RecordedExchange) {
        let entries: [HARLog.Entry]? = state.withLock { s in
            guard s.entries.count < Self.maxEntries, let redactor = s.redactor else {
                s.dropped += 1
                return nil
            }
            let scrubbing = redactor.adding(runtimeSecrets: s.runtimeSecrets?.runtimeSecrets() ?? [])
            s.entries.append(exchange.entry(redactor: scrubbing, id: String(s.entries.count + 1)))
            return s.entries
        }
        guard let entries else {
            if state.withLock({ $0.dropped }) == 1 { logger.warning("record: \(path) holds \(Self.maxEntries) entries; later exchanges are not recorded") }
            return
        }
        do {
            let bytes = try HARExport.json(HARLog(log: HARLog.Log(creator: HARExport.gatewayCreator, entries: entries)))
            try PrivateFile.write(bytes, to: path)
        } catch {
            logger.error("record: cannot write \(path): \(error)")
        }
    }
}

/// The recorders by file, long-lived (``HARRecorder``).
public final class HARRecorders: Sendable {
    private let recorders = Mutex<[String: HARRecorder]>([:])

    public init() {}

    /// The transport that records `config`'s exchanges into its file, in front of `next`.
    public func transport(
        for config: RecordConfig, redactor: TraceRedactor, runtimeSecrets: (any RuntimeSecretSource)?, logger: Logger, next: any UpstreamTransport
    ) -> RecordingTransport {
        let recorder = recorders.withLock { all in
            if let existing = all[config.har] { return existing }
            let made = HARRecorder(path: config.har, logger: logger)
            all[config.har] = made
            return made
        }
        recorder.use(redactor: redactor, runtimeSecrets: runtimeSecrets)
        return RecordingTransport(recorder: recorder, next: next)
    }

    /// Waits until every recorder has written what it was given.
    public func flush() {
        for recorder in recorders.withLock({ Array($0.values) }) { recorder.flush() }
    }
}
