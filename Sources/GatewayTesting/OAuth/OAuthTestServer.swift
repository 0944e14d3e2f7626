public import NIOSSL

/// A test OAuth2 authorization server on 127.0.0.1 (random port, optional TLS):
/// ``OAuthTestAuthority``'s token endpoint at ``tokenPath``. Modes, counters and
/// issued tokens are on ``authority``.
public final class OAuthTestServer: Sendable {
    /// The token endpoint's path (the test upstream serves custom routes under `/custom`).
    public static let tokenPath = "/custom/oauth/token"

    public let authority: OAuthTestAuthority
    public let server: TestUpstream

    private init(authority: OAuthTestAuthority, server: TestUpstream) {
        self.authority = authority
        self.server = server
    }

    /// Starts a token endpoint for `authority` (a default one if nil).
    public static func start(authority: OAuthTestAuthority = OAuthTestAuthority(), tls: NIOSSLContext? = nil) async throws -> OAuthTestServer {
        let server = try await TestUpstream.start(tls: tls)
        server.setResponder { request in
            guard request.path == tokenPath else { return .text("not found\n", status: 404) }
            return await authority.respond(to: request)
        }
        return OAuthTestServer(authority: authority, server: server)
    }

    public var port: Int { server.port }
    /// `http(s)://127.0.0.1:PORT/custom/oauth/token`.
    public var tokenURL: String { server.url(Self.tokenPath) }

    public func shutdown() async throws {
        try await server.shutdown()
    }
}
