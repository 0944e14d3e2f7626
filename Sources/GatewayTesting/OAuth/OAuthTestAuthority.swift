import Foundation
import NIOConcurrencyHelpers

/// The logic of a test OAuth2 authorization server, without sockets: a token
/// endpoint (RFC 6749 §4.4 client_credentials, §6 refresh_token) that issues
/// short-lived access tokens and rotating refresh tokens, counts its calls, and
/// can be told to fail; and the validity check a protected resource asks it.
///
/// ``OAuthTestServer`` serves it over HTTP(S); tests of the policies can call
/// ``respond(to:)`` in process.
public final class OAuthTestAuthority: Sendable {
    /// How the token endpoint answers.
    public enum Mode: Sendable, Equatable {
        /// Issue tokens.
        case normal
        /// 400 `{"error":"invalid_grant"}` to every call.
        case invalidGrant
        /// This status (e.g. 500) with a JSON error body.
        case serverError(Int)
        /// Wait this long, then answer normally.
        case slow(Duration)
    }

    /// One token endpoint call as received (the form fields decoded).
    public struct TokenCall: Sendable {
        public var form: [String: String]
        /// `basic` (Authorization header), `post` (client_secret in the body) or `none`.
        public var clientAuthentication: String
    }

    private struct State {
        var mode: Mode = .normal
        var expiresIn: Int
        var rotateRefreshTokens = true
        var validRefreshTokens: Set<String>
        /// Access token → when it stops being valid.
        var accessTokens: [String: ContinuousClock.Instant] = [:]
        var issuedAccessTokens: [String] = []
        var issuedRefreshTokens: [String] = []
        var calls: [TokenCall] = []
        var counter = 0
        var held = false
        /// Resumed with true to answer, false to drop (the caller went away).
        var heldCalls: [CheckedContinuation<Bool, Never>] = []
        var revokeFamilyOnReuse = false
        var usedRefreshTokens: Set<String> = []
        var familyRevoked = false
    }

    public let clientID: String
    /// Nil: a public client (only `client_id` is checked).
    public let clientSecret: String?
    public let initialRefreshToken: String
    private let state: NIOLockedValueBox<State>

    public init(clientID: String = "gateway-client", clientSecret: String? = "client-secret-Zq8", refreshToken: String = "rt-initial-Kp3", expiresIn: Int = 3600) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.initialRefreshToken = refreshToken
        self.state = NIOLockedValueBox(State(expiresIn: expiresIn, validRefreshTokens: [refreshToken]))
    }

    // MARK: Control

    public func setMode(_ mode: Mode) { state.withLockedValue { $0.mode = mode } }
    /// `expires_in` of tokens issued from now on (also their real lifetime).
    public func setExpiresIn(_ seconds: Int) { state.withLockedValue { $0.expiresIn = seconds } }
    /// Whether a refresh issues a new refresh token and invalidates the used one (default true).
    public func setRotateRefreshTokens(_ rotate: Bool) { state.withLockedValue { $0.rotateRefreshTokens = rotate } }
    /// Makes every access token issued so far invalid (as if all had expired).
    public func revokeAccessTokens() { state.withLockedValue { $0.accessTokens.removeAll() } }

    /// From now on, token calls are counted and then wait until ``releaseTokenCalls()``.
    public func holdTokenCalls() { state.withLockedValue { $0.held = true } }

    /// Lets held token calls (and later ones) proceed.
    public func releaseTokenCalls() {
        let waiting = state.withLockedValue { s -> [CheckedContinuation<Bool, Never>] in
            s.held = false
            defer { s.heldCalls = [] }
            return s.heldCalls
        }
        for call in waiting { call.resume(returning: true) }
    }

    /// Drops the oldest held call without processing it (its caller died):
    /// it rotates nothing. Later calls are still held until ``releaseTokenCalls()``.
    public func dropOldestHeldTokenCall() {
        let oldest = state.withLockedValue { s -> CheckedContinuation<Bool, Never>? in
            s.heldCalls.isEmpty ? nil : s.heldCalls.removeFirst()
        }
        oldest?.resume(returning: false)
    }

    /// Refresh-token reuse detection (as Auth0, Okta): presenting a refresh
    /// token that was already rotated revokes the whole family, so every
    /// refresh token of it, the newest included, stops working.
    public func setRevokeFamilyOnReuse(_ revoke: Bool) { state.withLockedValue { $0.revokeFamilyOnReuse = revoke } }

    /// A rotated refresh token was presented again (with ``setRevokeFamilyOnReuse(_:)``): the family is revoked.
    public var familyRevoked: Bool { state.withLockedValue { $0.familyRevoked } }

    /// Token calls waiting for ``releaseTokenCalls()`` right now.
    public var heldTokenCallCount: Int { state.withLockedValue { $0.heldCalls.count } }

    // MARK: Inspection

    /// Calls to the token endpoint so far, whatever their outcome.
    public var tokenCallCount: Int { state.withLockedValue { $0.calls.count } }
    public var tokenCalls: [TokenCall] { state.withLockedValue { $0.calls } }
    /// Every access token ever issued, in order.
    public var issuedAccessTokens: [String] { state.withLockedValue { $0.issuedAccessTokens } }
    /// Every refresh token ever issued (rotations), in order; the initial one is not included.
    public var issuedRefreshTokens: [String] { state.withLockedValue { $0.issuedRefreshTokens } }
    /// The refresh tokens that would be accepted now.
    public var validRefreshTokens: Set<String> { state.withLockedValue { $0.validRefreshTokens } }

    /// Whether a protected resource should accept `token` now.
    public func isValid(accessToken token: String) -> Bool {
        state.withLockedValue { s in
            guard let until = s.accessTokens[token] else { return false }
            return ContinuousClock.now < until
        }
    }

    /// Whether `Authorization: Bearer <token>` in `headers` carries a valid token.
    public func isAuthorized(_ request: RecordedRequest) -> Bool {
        guard let value = request.header("Authorization"), value.lowercased().hasPrefix("bearer ") else { return false }
        return isValid(accessToken: String(value.dropFirst("bearer ".count)))
    }

    // MARK: Token endpoint

    /// Answers one token endpoint request (POST, form body).
    public func respond(to request: RecordedRequest) async -> TestResponse {
        let form = Self.parseForm(request.body)
        let call = TokenCall(form: form, clientAuthentication: Self.clientAuthentication(request, form: form))
        let answer = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let proceed = state.withLockedValue { s -> Bool in
                s.calls.append(call)
                guard s.held else { return true }
                s.heldCalls.append(continuation)
                return false
            }
            if proceed { continuation.resume(returning: true) }
        }
        guard answer else { return Self.error(503, "temporarily_unavailable", description: "dropped") }
        let mode = state.withLockedValue { $0.mode }
        switch mode {
        case .normal:
            break
        case .invalidGrant:
            return Self.error(400, "invalid_grant", description: "the refresh token is no longer valid")
        case .serverError(let status):
            return Self.error(status, "server_error", description: "try again later")
        case .slow(let delay):
            try? await Task.sleep(for: delay)
        }
        guard request.method == "POST" else { return Self.error(405, "invalid_request") }
        guard authenticates(request, form: form, method: call.clientAuthentication) else {
            return Self.error(401, "invalid_client", headers: [("WWW-Authenticate", "Basic realm=\"token\"")])
        }
        return issue(for: form)
    }

    private func issue(for form: [String: String]) -> TestResponse {
        let grant = form["grant_type"] ?? ""
        return state.withLockedValue { s -> TestResponse in
            var newRefresh: String?
            switch grant {
            case "client_credentials":
                break
            case "refresh_token":
                guard let presented = form["refresh_token"], s.validRefreshTokens.contains(presented) else {
                    if s.revokeFamilyOnReuse, let presented = form["refresh_token"], s.usedRefreshTokens.contains(presented) {
                        s.familyRevoked = true
                        s.validRefreshTokens.removeAll()
                    }
                    return Self.error(400, "invalid_grant", description: "unknown or used refresh token")
                }
                if s.rotateRefreshTokens {
                    s.validRefreshTokens.remove(presented)
                    s.usedRefreshTokens.insert(presented)
                    s.counter += 1
                    let rotated = "rt-\(s.counter)-\(Self.randomHex())"
                    s.validRefreshTokens.insert(rotated)
                    s.issuedRefreshTokens.append(rotated)
                    newRefresh = rotated
                }
            default:
                return Self.error(400, "unsupported_grant_type")
            }
            s.counter += 1
            let access = "at-\(s.counter)-\(Self.randomHex())"
            s.accessTokens[access] = ContinuousClock.now + .seconds(s.expiresIn)
            s.issuedAccessTokens.append(access)
            var json: [String: Any] = ["access_token": access, "token_type": "Bearer", "expires_in": s.expiresIn]
            if let newRefresh { json["refresh_token"] = newRefresh }
            if let scope = form["scope"] { json["scope"] = scope }
            let body = (try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])) ?? Data()
            return TestResponse(status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")], body: Array(body))
        }
    }

    private func authenticates(_ request: RecordedRequest, form: [String: String], method: String) -> Bool {
        switch method {
        case "basic":
            guard let value = request.header("Authorization"),
                let decoded = Data(base64Encoded: String(value.dropFirst("basic ".count))),
                let text = String(data: decoded, encoding: .utf8),
                let colon = text.firstIndex(of: ":")
            else { return false }
            let id = Self.formDecode(text[..<colon])
            let secret = Self.formDecode(text[text.index(after: colon)...])
            return id == clientID && secret == clientSecret
        case "post":
            return form["client_id"] == clientID && form["client_secret"] == clientSecret
        default:
            return clientSecret == nil && form["client_id"] == clientID
        }
    }

    private static func clientAuthentication(_ request: RecordedRequest, form: [String: String]) -> String {
        if let value = request.header("Authorization"), value.lowercased().hasPrefix("basic ") { return "basic" }
        if form["client_secret"] != nil { return "post" }
        return "none"
    }

    static func parseForm(_ body: [UInt8]) -> [String: String] {
        var form: [String: String] = [:]
        for item in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            form[formDecode(parts[0])] = parts.count > 1 ? formDecode(parts[1]) : ""
        }
        return form
    }

    static func formDecode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    static func error(_ status: Int, _ code: String, description: String? = nil, headers: [(String, String)] = []) -> TestResponse {
        var json = ["error": code]
        if let description { json["error_description"] = description }
        let body = (try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])) ?? Data()
        return TestResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: Array(body))
    }

    private static func randomHex() -> String {
        String(UInt64.random(in: .min ... .max), radix: 16)
    }
}
