import Logging
import NIOHTTP2

/// Why an intercepted HTTP/2 connection closed, told in the one line it
/// logs when it does (``ClientHTTP2ConnectionHandler/channelInactive(context:)``):
/// at info when the client abused the connection (a protocol error NIOHTTP2
/// answered with GOAWAY, a flood, a GOAWAY of its own for an error), at
/// debug when it closed as connections do (the client went away, idle,
/// drained, a reset socket).
extension ClientHTTP2ConnectionHandler {
    enum CloseReason: Equatable {
        /// The client closed it (or its socket went away) without a word.
        case clientClosed
        /// `limits.idle_timeout` passed without a stream.
        case idle
        /// The gateway drained it (shutdown or reload): GOAWAY, then the last stream ended.
        case drained
        /// The drain timeout passed with streams still open.
        case drainTimeout
        /// A transport error: TLS or the socket (a reset, an unclean shutdown); not the client's HTTP/2.
        case transport(String)
        /// A connection error in the client's HTTP/2 (NIOHTTP2 sent GOAWAY): a flood or a protocol violation.
        case protocolError(String)
        /// The client's GOAWAY with an error code.
        case clientGoAway(HTTP2ErrorCode)

        /// What the line says after `closed HTTP/2 connection: `.
        var text: String {
            switch self {
            case .clientClosed: "closed by the client"
            case .idle: "idle"
            case .drained: "drained"
            case .drainTimeout: "drain timeout"
            case .transport(let error): "transport error: \(error)"
            case .protocolError(let reason): reason
            case .clientGoAway(let code): "the client's GOAWAY, error code 0x\(String(code.networkCode, radix: 16))"
            }
        }

        /// Info for abuse, debug for the rest.
        var level: Logger.Level {
            switch self {
            case .protocolError, .clientGoAway: .info
            case .clientClosed, .idle, .drained, .drainTimeout, .transport: .debug
            }
        }

        /// The reason `error` (a connection error, not a stream's) gives.
        init(connectionError error: any Error) {
            switch error {
            case is NIOHTTP2Errors.ExcessiveRSTFrames: self = .protocolError("too many stream resets (rapid reset)")
            case is NIOHTTP2Errors.ExcessiveContinuationFrames: self = .protocolError("too many CONTINUATION frames")
            case is NIOHTTP2Errors.ExcessiveEmptyDataFrames: self = .protocolError("too many empty DATA frames")
            case is NIOHTTP2Errors.ExcessiveStreamErrors: self = .protocolError("too many stream errors")
            case is NIOHTTP2Errors.ExcessiveControlFrames: self = .protocolError("too many control frames")
            case is NIOHTTP2Errors.ExcessiveNumberOfGlitches: self = .protocolError("too many protocol glitches")
            case is NIOHTTP2Errors.ExcessivelyLargeHeaderBlock: self = .protocolError("a header block over the limit")
            case is NIOHTTP2Errors.IOOnClosedConnection: self = .transport("\(error)")
            case is any NIOHTTP2Error: self = .protocolError("protocol error: \(error)")
            default: self = .transport("\(error)")
            }
        }
    }
}
