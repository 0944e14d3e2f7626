public import NIOHTTP1

/// The one error type of the gateway: a stable code (used in `X-Gateway-Error`,
/// JSON error bodies and metric labels), a message fit for a client, the upstream
/// it concerns, an optional underlying cause, and whether retrying may help.
///
/// Messages and causes never carry secrets: callers pass descriptions of hosts,
/// ports and socket errors, never header values.
public struct GatewayError: Error, Sendable, CustomStringConvertible {
    public let code: Code
    public let message: String
    public var upstream: String?
    public var cause: String?
    /// The upstream closed (or reset) a connection the pool had reused, before
    /// any byte of the response: a keep-alive connection the server was closing
    /// as the request went. The request may never have reached the server's
    /// handler; one that can be repeated goes once more on a new connection
    /// (RFC 9112 §9.3.1), whatever the retry policy says.
    public var staleConnection = false

    public init(_ code: Code, _ message: String, upstream: String? = nil, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.upstream = upstream
        self.cause = cause.map(GatewayError.describe)
    }

    public init(_ code: Code, _ message: String, upstream: String? = nil, causeDescription: String?) {
        self.code = code
        self.message = message
        self.upstream = upstream
        self.cause = causeDescription
    }

    public var status: HTTPResponseStatus { code.status }
    public var isRetryable: Bool { code.isRetryable }

    public var description: String {
        var text = "\(code.rawValue): \(message)"
        if let upstream { text += " (upstream \(upstream))" }
        if let cause { text += " [cause: \(cause)]" }
        return text
    }
}

extension GatewayError {
    /// Stable error codes. Raw values are part of the public interface
    /// (`X-Gateway-Error` header, metrics); never rename one.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        case badRequest = "bad_request"
        case requestSmuggling = "request_smuggling"
        case headTooLarge = "head_too_large"
        case headTimeout = "head_timeout"
        case unsupportedTarget = "unsupported_target"
        case hostNotAllowed = "host_not_allowed"
        case portNotAllowed = "port_not_allowed"
        case proxyAuthRequired = "proxy_auth_required"
        case bodyTooLarge = "body_too_large"
        case dnsFailure = "dns_failure"
        case connectFailed = "connect_failed"
        case connectTimeout = "connect_timeout"
        case connectionReset = "connection_reset"
        case upstreamProtocolError = "upstream_protocol_error"
        case requestTimeout = "request_timeout"
        case tlsHandshakeFailed = "tls_handshake_failed"
        case certificateInvalid = "certificate_invalid"
        case pinMismatch = "pin_mismatch"
        case poolExhausted = "pool_exhausted"
        case shuttingDown = "shutting_down"
        case internalError = "internal_error"
        /// The gateway's own rate limit for the upstream (queue full, or the wait
        /// would exceed `max_wait`): 429 with `Retry-After`.
        case localRateLimit = "local_rate_limit"
        /// The gateway could not obtain an access token for the upstream (the token
        /// endpoint refused, failed or timed out): 401; `cause` names the token
        /// endpoint's `error` code (e.g. `invalid_grant`), never a secret.
        case tokenRefreshFailed = "token_refresh_failed"
        /// The gateway could not make a certificate to intercept a `CONNECT` (502).
        case interceptionFailed = "interception_failed"
        /// A request body with a transfer coding other than `chunked`
        /// (`Transfer-Encoding: gzip, chunked`): 501, as nginx answers; the
        /// gateway neither decodes it nor passes it on as if it were plain chunked.
        case unsupportedTransferCoding = "unsupported_transfer_coding"
        /// The client stopped sending a request body for `limits.body_timeout`: 408, and the connection closes.
        case bodyTimeout = "body_timeout"
        /// The client did not read its response for `limits.send_timeout`: the connection closes
        /// (no response can reach it; the code names the cause in logs and metrics).
        case sendTimeout = "send_timeout"
        /// `shared_state` is configured with `on_unavailable: fail` and the
        /// database could not be reached for what the request needs (a token
        /// refresh, a shared rate limit): 503.
        case sharedStateUnavailable = "shared_state_unavailable"
        /// The upstream's `mocks` or `replay` says `unmatched: block` and no rule
        /// or recorded entry matched the request: 502, and nothing reached the network.
        case notMocked = "not_mocked"
        /// Inside an intercepted `CONNECT`, a request for another host (its
        /// `:authority` or `Host`): 421, never sent to the CONNECT's origin
        /// under another name's certificate (RFC 9110 §15.5.20).
        case misdirectedRequest = "misdirected_request"
        /// A path the gateway's own onboarding site does not have: 404.
        case notFound = "not_found"

        public var status: HTTPResponseStatus {
            switch self {
            case .badRequest, .requestSmuggling, .unsupportedTarget: return .badRequest
            case .headTooLarge: return .init(statusCode: 431, reasonPhrase: "Request Header Fields Too Large")
            case .headTimeout, .bodyTimeout: return .requestTimeout
            case .hostNotAllowed, .portNotAllowed: return .forbidden
            case .proxyAuthRequired: return .proxyAuthenticationRequired
            case .bodyTooLarge: return .payloadTooLarge
            case .dnsFailure, .connectFailed, .connectionReset, .upstreamProtocolError,
                .tlsHandshakeFailed, .certificateInvalid, .pinMismatch, .interceptionFailed, .notMocked:
                return .badGateway
            case .connectTimeout, .requestTimeout, .sendTimeout: return .gatewayTimeout
            case .poolExhausted, .shuttingDown, .sharedStateUnavailable: return .serviceUnavailable
            case .internalError: return .internalServerError
            case .localRateLimit: return .tooManyRequests
            case .tokenRefreshFailed: return .unauthorized
            case .unsupportedTransferCoding: return .notImplemented
            case .misdirectedRequest: return .misdirectedRequest
            case .notFound: return .notFound
            }
        }

        /// Whether a new attempt may succeed (subject to the retry policy's own safety rules).
        public var isRetryable: Bool {
            switch self {
            case .connectFailed, .connectTimeout, .connectionReset, .requestTimeout, .dnsFailure, .poolExhausted:
                return true
            default:
                return false
            }
        }
    }
}
