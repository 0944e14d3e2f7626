public import GatewayCore
import NIOConcurrencyHelpers
public import NIOSSL

/// Makes the TLS handler for a new upstream connection. The pool calls it on the
/// connection's event loop, adds the handler to the pipeline, and waits for the
/// handshake; when the handshake fails it reads `report.failure` to tell a pin
/// mismatch or an invalid certificate from other TLS failures.
public protocol UpstreamTLSHandlerFactory: Sendable {
    func makeClientHandler(
        serverHostname: String,
        settings: UpstreamTLSSettings,
        upstreamName: String?
    ) throws -> (handler: NIOSSLClientHandler, report: TLSVerificationReport)

    /// The same, offering `alpn` in the handshake. A factory that does not
    /// implement it offers what its handler above offers (the pool then speaks
    /// HTTP/1.1 unless the server selects `h2`, or the key asks for `http2`).
    func makeClientHandler(
        serverHostname: String,
        settings: UpstreamTLSSettings,
        upstreamName: String?,
        alpn: UpstreamALPNOffer
    ) throws -> (handler: NIOSSLClientHandler, report: TLSVerificationReport)
}

extension UpstreamTLSHandlerFactory {
    public func makeClientHandler(
        serverHostname: String,
        settings: UpstreamTLSSettings,
        upstreamName: String?,
        alpn: UpstreamALPNOffer
    ) throws -> (handler: NIOSSLClientHandler, report: TLSVerificationReport) {
        try makeClientHandler(serverHostname: serverHostname, settings: settings, upstreamName: upstreamName)
    }
}

/// What a new upstream connection offers in ALPN (RFC 7301), most preferred first.
public enum UpstreamALPNOffer: Sendable, Hashable, CaseIterable {
    /// `http/1.1`: an HTTP/1.1 connection (`http_version: http1`, the pool's
    /// HTTP/1 connections, WebSocket handshakes).
    case http1
    /// `h2`, then `http/1.1`: `http_version: auto`, the server chooses.
    case http2AndHTTP1
    /// `h2` alone: `http_version: http2`.
    case http2

    public var protocols: [String] {
        switch self {
        case .http1: ["http/1.1"]
        case .http2AndHTTP1: ["h2", "http/1.1"]
        case .http2: ["h2"]
        }
    }
}

/// Filled in by the certificate verifier during the handshake.
public final class TLSVerificationReport: Sendable {
    private let box = NIOLockedValueBox<GatewayError?>(nil)

    public init() {}

    /// Why verification refused the peer (`pinMismatch`, `certificateInvalid`), if it did.
    public var failure: GatewayError? {
        get { box.withLockedValue { $0 } }
        set { box.withLockedValue { $0 = newValue } }
    }
}
