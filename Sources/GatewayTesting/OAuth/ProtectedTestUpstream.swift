import Foundation
public import NIOSSL
import NIOConcurrencyHelpers

/// A resource server on 127.0.0.1 that wants `Authorization: Bearer <token>`
/// with a token its ``OAuthTestAuthority`` says is valid: then 200 with the
/// `/echo` JSON (``EchoResponseBody``); otherwise 401 with
/// `WWW-Authenticate: Bearer error="invalid_token"`. Serves every path under `/custom`.
public final class ProtectedTestUpstream: Sendable {
    public let server: TestUpstream
    private let counts: NIOLockedValueBox<(authorized: Int, unauthorized: Int)>

    private init(server: TestUpstream, counts: NIOLockedValueBox<(authorized: Int, unauthorized: Int)>) {
        self.server = server
        self.counts = counts
    }

    public static func start(authority: OAuthTestAuthority, tls: NIOSSLContext? = nil) async throws -> ProtectedTestUpstream {
        let server = try await TestUpstream.start(tls: tls)
        let counts = NIOLockedValueBox((authorized: 0, unauthorized: 0))
        server.setResponder { request in
            guard authority.isAuthorized(request) else {
                counts.withLockedValue { $0.unauthorized += 1 }
                return TestResponse(
                    status: 401,
                    headers: [("WWW-Authenticate", "Bearer error=\"invalid_token\""), ("Content-Type", "text/plain")],
                    body: Array("invalid or expired token\n".utf8)
                )
            }
            counts.withLockedValue { $0.authorized += 1 }
            let echo = EchoResponseBody(
                method: request.method, target: request.target, headers: request.headers,
                bodyBase64: Data(request.body).base64EncodedString(), bodyLength: request.body.count
            )
            let json = (try? JSONEncoder().encode(echo)) ?? Data()
            return TestResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(json))
        }
        return ProtectedTestUpstream(server: server, counts: counts)
    }

    public var port: Int { server.port }
    public var baseURL: String { server.baseURL }
    /// Requests answered 200 / 401 so far.
    public var authorizedCount: Int { counts.withLockedValue { $0.authorized } }
    public var unauthorizedCount: Int { counts.withLockedValue { $0.unauthorized } }
    public var receivedRequests: [RecordedRequest] { server.receivedRequests }

    public func shutdown() async throws {
        try await server.shutdown()
    }
}
