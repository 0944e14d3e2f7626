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
