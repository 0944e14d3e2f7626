import Foundation
import GatewayCore
import Logging

/// What the event loop keeps of one traced exchange when it ends: the values
/// as captured, nothing formatted. Redaction, curl lines and the JSON line are
/// made from it later on the writer thread (``TraceFormatter``), so the
/// request path pays for copies of references, not for string building.
struct TraceCapture: Sendable {
    let id: String
    /// When the exchange started (the record's `time`).
    let wallStart: Date
    /// The client's `ip:port`.
    let client: String
    /// The request as routed, before credentials, body left out.
    let request: ProxyRequest
    /// The configured upstream the exchange matched, as the exchange record has it.
    let recordedUpstream: String?
    let attempts: AttemptList
    let declaredLength: Int?
    /// The request body as captured; nil when it was not (too large, or unknown).
    let body: [UInt8]?
    /// Status sent to the client; nil when the exchange failed before one.
    let status: Int?
    let error: String?
    let responseBytes: Int
    /// The fields of the response head the client got, as bytes (nil when it
    /// got none from the exchange), and the `Via` the gateway added after them.
    let responseFields: ResponseFields?
    let responseVia: String?
    /// The exchange's start on the clock the attempts' phases use.
    let startedAt: ContinuousClock.Instant
    let duration: Duration
    /// Where the through-gateway curl line is logged at `notice`.
    let logger: Logger
    /// The line carries `request=<id>` (as the exchange's `context.logger` adds it).
    var tagsLinesWithID = false
    /// The exchange's distributed trace while tracing is on (the record's `traceId`).
    var traceID: String? = nil
    /// A fault, mock or replay acted (``TraceObserver/injectedMark(_:)``): the record's `injected`.
    var injected: String? = nil
    /// The protocol the client spoke (`HTTP/1.1`, `HTTP/2`).
    var clientHTTPVersion = UpstreamHTTPVersion.http1Name

    /// What the queue's byte budget counts for it before it is formatted: the
    /// body (twice when short enough to be inline in both curl lines) plus a
    /// line's worth of headers and URL.
    var estimatedBytes: Int {
        let bodyBytes = body?.count ?? 0
        return 1024 + 2 * request.target.utf8.count + (bodyBytes <= CurlCommand.maxInlineBody ? 2 * bodyBytes : bodyBytes)
    }
}
