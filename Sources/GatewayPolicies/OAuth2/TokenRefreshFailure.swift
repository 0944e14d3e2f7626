public import GatewayCore

/// Why a token could not be obtained. `reason` is short and bounded, fit for a
/// client-facing error body: the token endpoint's own `error` code
/// (`invalid_grant`, `invalid_client`, ...), `http_NNN`, `timeout`, a gateway
/// error code of the call (`connect_failed`, `pin_mismatch`, ...),
/// `invalid_token_response`, `no_refresh_token`, `invalid_token_url` or
/// `shared_refresh_busy` (with shared state: another replica held the
/// credential's refresh lock past the lock timeout).
/// Neither field ever carries a token, a secret or the endpoint's response body.
public struct TokenRefreshFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String
    public let detail: String

    public init(reason: String, detail: String) {
        self.reason = reason
        self.detail = detail
    }

    public var description: String { "\(reason): \(detail)" }

    /// The error the client sees: 401, `X-Gateway-Error: token_refresh_failed`,
    /// `cause` = `reason`.
    public func gatewayError(upstream: String) -> GatewayError {
        GatewayError(
            .tokenRefreshFailed,
            "could not obtain an access token for upstream \(upstream): \(detail)",
            upstream: upstream,
            causeDescription: reason
        )
    }

    static let timeout = TokenRefreshFailure(reason: "timeout", detail: "the token endpoint did not answer in time")

    /// Another replica has held the credential's refresh lock for `waited`: its
    /// token call is slow or stuck. Not an outage of the database (which
    /// answered), so no local token call is made with the same refresh token.
    public static func sharedRefreshBusy(waited: Duration) -> TokenRefreshFailure {
        TokenRefreshFailure(
            reason: "shared_refresh_busy",
            detail: "another gateway replica has been refreshing this token for more than \(waited.seconds) s"
        )
    }

    /// The token endpoint's `error` if it is a plain code (letters, digits, `_.-`,
    /// at most 64 characters); anything else is not echoed to clients.
    static func endpointErrorCode(_ value: Any?) -> String? {
        guard let text = value as? String, !text.isEmpty, text.utf8.count <= 64,
            text.utf8.allSatisfy({ byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
            })
        else { return nil }
        return text
    }
}
