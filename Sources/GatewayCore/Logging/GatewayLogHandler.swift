#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
public import Logging
import NIOConcurrencyHelpers

/// The gateway's log lines on standard error, in exactly the format of
/// swift-log's `StreamLogHandler`:
///
///     2026-11-22T02:08:37+0000 info gateway: request=1x-4 status=200 [GatewayListener] GET http://h/p 200
///
/// but made for a line per request (the info level logs every exchange): the
/// event is only captured where it is logged (an event loop) and queued
/// (``LogLineQueue``); the writer thread formats and writes the lines in
/// batches, in order: the timestamp formatted once per second, metadata
/// merged and sorted in one small array instead of intermediate dictionaries.
/// Formatting and `write(2)` on the loop cost about a quarter of the
/// gateway's CPU per request at info level. The exchange line itself skips
/// even the event: it is queued as values (``ExchangeLine``, through
/// ``ExchangeLineSink``) and written as the same bytes.
public struct GatewayLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadataProvider: Logger.MetadataProvider?
    public var metadata: Logger.Metadata = [:]
    let label: String
    let queue: LogLineQueue

    public init(label: String, queue: LogLineQueue = .standardError, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.queue = queue
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        queue.enqueue(.event(event, label: label, metadata: metadata, provided: metadataProvider?.get(), second: time(nil)))
    }

    /// One line, newline included, as `StreamLogHandler` writes it: metadata is
    /// the handler's, then the provider's, then the event's (later ones win),
    /// plus `error.message` / `error.type` for an event with an error; sorted by key.
    static func format(_ event: LogEvent, label: String, metadata: Logger.Metadata, provided: Logger.Metadata?, timestamp: String) -> String {
        var line = ""
        var pairs: [MetadataPair] = []
        append(event, label: label, metadata: metadata, provided: provided, timestamp: timestamp, pairs: &pairs, to: &line)
        return line
    }

    /// A metadata entry as lines write them (the element type of `Logger.Metadata`).
    typealias MetadataPair = (key: String, value: Logger.MetadataValue)

    /// ``format(_:label:metadata:provided:timestamp:)`` appended to `line`;
    /// `pairs` is scratch space, reused from line to line (left empty).
    static func append(
        _ event: LogEvent, label: String, metadata: Logger.Metadata, provided: Logger.Metadata?, timestamp: String,
        pairs: inout [MetadataPair], to line: inout String
    ) {
        line += timestamp
        line += " "
        line += event.level.rawValue
        if !label.isEmpty { line += " " }
        line += label
        line += ":"
        appendMetadata(to: &line, base: metadata, provided: provided, explicit: event.metadata, error: event.error, pairs: &pairs)
        line += " ["
        line += event.source
        line += "] "
        line += event.message.description
        line += "\n"
    }

    private static func appendMetadata(
        to line: inout String, base: Logger.Metadata, provided: Logger.Metadata?, explicit: Logger.Metadata?, error: (any Error)?,
        pairs: inout [MetadataPair]
    ) {
        pairs.removeAll(keepingCapacity: true)
        if base.isEmpty, provided?.isEmpty ?? true, error == nil {
            // The exchange line's case (the gateway's loggers carry no metadata of
            // their own and no provider): the event's keys, unique already, no merge.
            guard let explicit, !explicit.isEmpty else { return }
            pairs.append(contentsOf: explicit)
        } else {
            merge(base: base, provided: provided ?? [:], explicit: explicit ?? [:], error: error, into: &pairs)
        }
        // Keys are short ASCII strings: `<` compares them as two integers each.
        pairs.sort { $0.key < $1.key }
        for pair in pairs {
            line += " "
            line += pair.key
            line += "="
            appendValue(pair.value, to: &line)
        }
        pairs.removeAll(keepingCapacity: true)
    }

    /// Base, then provided, then explicit metadata (later ones win), then the error's two entries.
    private static func merge(base: Logger.Metadata, provided: Logger.Metadata, explicit: Logger.Metadata, error: (any Error)?, into pairs: inout [MetadataPair]) {
        pairs.reserveCapacity(base.count + provided.count + explicit.count + 2)
        func put(_ key: String, _ value: Logger.MetadataValue) {
            if let index = pairs.firstIndex(where: { $0.key == key }) {
                pairs[index].value = value
            } else {
                pairs.append((key, value))
            }
        }
        pairs.append(contentsOf: base)
        for (key, value) in provided { put(key, value) }
        for (key, value) in explicit { put(key, value) }
        if let error {
            put("error.message", "\(error)")
            put("error.type", "\(String(reflecting: type(of: error)))")
        }
    }

    /// `value` as `"\(value)"` writes it; a string as it is, without a `description` call.
    static func appendValue(_ value: Logger.MetadataValue, to line: inout String) {
        switch value {
        case .string(let text):
            line += text
        case .stringConvertible(let convertible):
            line += convertible.description
        case .array, .dictionary:
            line += value.description
        }
    }
}

/// `2026-11-22T02:08:37+0000` in local time (`strftime`, as `StreamLogHandler`),
/// formatted once per second.
enum LogTimestamp {
    private static let cache = NIOLockedValueBox<(second: Int, text: String)>((-1, ""))

    static func now() -> String {
        text(forSecond: time(nil))
    }

    /// The timestamp of `second` (seconds since 1970), from the cache when it is the last one asked for.
    static func text(forSecond second: Int) -> String {
        if let text = cache.withLockedValue({ $0.second == second ? $0.text : nil }) { return text }
        var seconds = time_t(second)
        let text = format(&seconds)
        cache.withLockedValue { $0 = (second, text) }
        return text
    }

    static func format(_ seconds: inout time_t) -> String {
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return "<unknown>" }
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
