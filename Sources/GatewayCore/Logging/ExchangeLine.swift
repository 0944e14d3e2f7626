public import NIOHTTP1

/// The info line of one exchange, as values: what an exchange logs through
/// ``ExchangeLineSink`` when its logger's handler is the gateway's own
/// (``GatewayLogHandler``). The event loop only fills it in: no metadata
/// dictionary, no number or URL turned into text, no swift-log event; the log
/// writer thread writes it (``append(label:timestamp:to:)``) as exactly the
/// line the event would have been:
///
///     2026-11-22T02:08:37+0000 info gateway: bytes_in=0 bytes_out=1024 ms=0.41 request=1x-4 status=200 upstream=api [GatewayListener] GET http://h/p 200
///
/// Any other handler (tests install their own) gets the event, as before.
public struct ExchangeLine: Sendable {
    /// `request=<id>`; nil for a context whose lines carry no id (``RequestContext/tagsLinesWithID``).
    public var requestID: String?
    public var method: HTTPMethod
    /// What the message names, before ``LoggedText/loggedTarget(_:)`` (applied by the writer).
    public var target: Target
    public var status: Int
    /// The exchange's duration, in milliseconds (`ms=`, rounded to hundredths by the writer).
    public var milliseconds: Double
    public var bytesIn: Int
    public var bytesOut: Int
    public var upstream: String?
    public var error: GatewayError.Code?
    /// `injected=mock`, `injected=fault:error`: the response was made by the
    /// gateway in the upstream's place (``Injection``); nil for the upstream's own.
    public var injected: String?
    /// The exchange's trace context while tracing is on: the writer reads its
    /// `trace_id` and `span_id` (they never change: ``ExchangeTraceContext``).
    public var trace: (any ExchangeTraceContext)?
    /// The line's `[source]`: the module that logs it, as swift-log names the
    /// source of an event logged there (`GatewayListener`).
    public var source: String

    public init(
        requestID: String?,
        method: HTTPMethod,
        target: Target,
        status: Int,
        milliseconds: Double,
        bytesIn: Int,
        bytesOut: Int,
        upstream: String?,
        error: GatewayError.Code?,
        trace: (any ExchangeTraceContext)?,
        source: String
    ) {
        self.requestID = requestID
        self.method = method
        self.target = target
        self.status = status
        self.milliseconds = milliseconds
        self.bytesIn = bytesIn
        self.bytesOut = bytesOut
        self.upstream = upstream
        self.error = error
        self.trace = trace
        self.source = source
    }
}

extension ExchangeLine {
    /// The request's target as the line names it: as the client wrote it, or
    /// a routed request's URL kept in parts (joined by the writer, not on the loop).
    public enum Target: Sendable {
        /// The request line's target as written (`head.uri`): a request answered
        /// before it was routed.
        case uri(String)
        /// A routed request's absolute URL (``ProxyRequest/url``), in parts.
        case routed(scheme: UpstreamScheme, host: String, port: Int, target: String)

        /// `request`'s URL, in parts.
        public init(_ request: ProxyRequest) {
            self = .routed(scheme: request.scheme, host: request.host, port: request.port, target: request.target)
        }

        /// The target as one string: `.routed`'s parts joined as ``ProxyRequest/url`` joins them.
        public var string: String {
            switch self {
            case .uri(let uri):
                return uri
            case .routed(let scheme, let host, let port, let target):
                var url: [UInt8] = []
                url.reserveCapacity(scheme.rawValue.utf8.count + host.utf8.count + target.utf8.count + 10)
                Self.appendURL(scheme: scheme, host: host, port: port, target: target, to: &url)
                return String(decoding: url, as: UTF8.self)
            }
        }

        /// ``LoggedText/loggedTarget(_:)`` of ``string``, appended to `line`. A
        /// routed URL whose host holds no `?`, no `@`, and whose host and
        /// origin-form target hold no byte that may start a control or bidi
        /// character (most) needs no rewrite but its query's values: its parts
        /// go to the line as they are, the query by
        /// ``LoggedText/appendWithoutValues(query:to:)``, never joined into a
        /// string of their own (an app's targets often have a query).
        func appendLogged(to line: inout [UInt8]) {
            switch self {
            case .uri(let uri):
                line.append(contentsOf: LoggedText.loggedTarget(uri).utf8)
            case .routed(let scheme, let host, let port, let target):
                guard Self.isPlain(host), Self.isPlainOriginForm(target) else {
                    line.append(contentsOf: LoggedText.loggedTarget(string).utf8)
                    return
                }
                Self.appendOrigin(scheme: scheme, host: host, port: port, to: &line)
                // The URL's authority ends where the target begins (`/`): an `@`
                // in the target is no userinfo, and the URL's first `?` is the target's.
                let bytes = target.utf8
                if let q = bytes.firstIndex(of: UInt8(ascii: "?")) {
                    line.append(contentsOf: bytes[..<q])
                    LoggedText.appendWithoutValues(query: bytes[q...], to: &line)
                } else {
                    line.append(contentsOf: bytes)
                }
            }
        }

        /// Nothing ``LoggedText/loggedTarget(_:)`` would change in a URL made of
        /// this text and ASCII letters, digits and `:/[]`.
        private static func isPlain(_ text: String) -> Bool {
            text.utf8.allSatisfy { byte in
                byte != UInt8(ascii: "?") && byte != UInt8(ascii: "@") && !TerminalSafety.mayStartUnsafe(byte)
            }
        }

        /// An origin-form target (`/` first) with no byte that may start a control or bidi character.
        private static func isPlainOriginForm(_ target: String) -> Bool {
            target.utf8.first == UInt8(ascii: "/") && !target.utf8.contains(where: TerminalSafety.mayStartUnsafe)
        }

        /// `scheme://host[:port]target`, as ``ProxyRequest/url`` writes it.
        private static func appendURL(scheme: UpstreamScheme, host: String, port: Int, target: String, to line: inout [UInt8]) {
            appendOrigin(scheme: scheme, host: host, port: port, to: &line)
            line.append(contentsOf: target.utf8)
        }

        /// `scheme://host[:port]`, as ``ProxyRequest/url`` begins: an IPv6 host
        /// in brackets, the port only when not the scheme's default.
        private static func appendOrigin(scheme: UpstreamScheme, host: String, port: Int, to line: inout [UInt8]) {
            line.append(contentsOf: scheme.rawValue.utf8)
            line.append(contentsOf: "://".utf8)
            let bracketed = host.utf8.contains(UInt8(ascii: ":"))
            if bracketed { line.append(UInt8(ascii: "[")) }
            line.append(contentsOf: host.utf8)
            if bracketed { line.append(UInt8(ascii: "]")) }
            if port != scheme.defaultPort {
                line.append(UInt8(ascii: ":"))
                LoggedText.appendDecimal(port, to: &line)
            }
        }
    }
}
