import NIOCore
import NIOSSL
import NIOTLS

/// Sits right after the `NIOSSLServerHandler` of an intercepted connection and
/// reports a failed handshake once (an error, or the client hanging up first).
/// Passes every event on unchanged.
final class InterceptionHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let onFailure: (any Error) -> Void
    private var finished = false

    init(onFailure: @escaping (any Error) -> Void) {
        self.onFailure = onFailure
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let tls = event as? TLSUserEvent, case .handshakeCompleted = tls {
            finished = true
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        report(error)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        report(InterceptionHandshakeFailure.ClosedDuringHandshake())
        context.fireChannelInactive()
    }

    private func report(_ error: any Error) {
        guard !finished else { return }
        finished = true
        onFailure(error)
    }
}

/// Classifies failed client handshakes into bounded labels.
enum InterceptionHandshakeFailure {
    static let untrustedCA = "untrusted_ca"
    static let closed = "closed"
    static let protocolError = "protocol"

    struct ClosedDuringHandshake: Error, CustomStringConvertible {
        var description: String { "the client closed the connection during the TLS handshake" }
    }

    /// What a client that does not accept the certificate it got sends: one of these
    /// alerts. A TLS 1.3 client (OpenSSL's, so curl and Python) checks the
    /// certificate before it switches to handshake keys, so its alert arrives in
    /// plaintext where the gateway expects an encrypted record: BoringSSL reports
    /// that as a bad record, which only happens in the handshake for this reason.
    private static let untrustedMarkers = [
        "ALERT_UNKNOWN_CA", "ALERT_BAD_CERTIFICATE", "ALERT_CERTIFICATE_UNKNOWN", "ALERT_UNSUPPORTED_CERTIFICATE",
        "DECRYPTION_FAILED_OR_BAD_RECORD_MAC", "BAD_PACKET_LENGTH",
    ]

    static func reason(for error: any Error) -> String {
        if error is ClosedDuringHandshake { return closed }
        if let error = error as? NIOSSLError {
            switch error {
            case .uncleanShutdown: return closed
            default: break
            }
        }
        let text = String(describing: error).uppercased()
        if untrustedMarkers.contains(where: { text.contains($0) }) { return untrustedCA }
        return protocolError
    }
}
