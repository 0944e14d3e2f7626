import Foundation
import GatewayConfig
public import GatewayCore

/// The last line of defence: every secret value the gateway holds, in every
/// form it sends it, replaced by bytes wherever it still shows up in a trace
/// (a header the upstream echoes, a body, a path).
extension TraceRedactor {
    /// Values shorter than this are not scrubbed: they would match everywhere.
    static let minimumScrubbedLength = 4

    /// Every configured secret in every encoding the gateway sends it, with
    /// its placeholder (`[REDACTED:<VARIABLE>]`, the variable a `--direct`
    /// curl line reads it from, plus `:<encoding>` for an encoded form), longest first:
    /// - each upstream credential's value as configured (`bearer` and `header`
    ///   send it so, `Bearer ` in front);
    /// - `basic`: base64 of `username:password`, as `Authorization: Basic` carries it;
    /// - `query`: the value percent-encoded, as the target carries it;
    /// - `oauth2`: client secret and refresh token form-encoded, as the token
    ///   call's body carries them, and base64 of `client_id:client_secret`
    ///   (both form-encoded), as its `Authorization: Basic` carries them;
    /// - each `proxy_auth` user's password, and base64 of `user:password`
    ///   (what a client's `Proxy-Authorization` carries).
    static func scrubList(config: GatewayConfig) -> [(value: String, placeholder: String)] {
        var list = ScrubList()
        for upstream in config.upstreams {
            guard let auth = upstream.auth else { continue }
            func variable(_ secret: Secret, _ key: String) -> String { variableName(for: secret, upstream: upstream.name, key: key) }
            for (key, secret) in auth.secrets { list.add(secret.value, variable(secret, key)) }
            switch auth.kind {
            case .basic(let username, let password):
                list.add(base64(username + ":" + password.value), variable(password, "password"), encoding: "base64")
            case .query(_, let value):
                list.add(PercentEncoding.encode(value.value), variable(value, "value"), encoding: "percent-encoded")
            case .oauth2(let oauth):
                if let secret = oauth.clientSecret {
                    list.add(PercentEncoding.formEncode(secret.value), variable(secret, "client_secret"), encoding: "form-encoded")
                    if oauth.clientAuthMethod == .clientSecretBasic {
                        let pair = PercentEncoding.formEncode(oauth.clientID.value) + ":" + PercentEncoding.formEncode(secret.value)
                        list.add(base64(pair), variable(secret, "client_secret"), encoding: "base64")
                    }
                }
                if let token = oauth.refreshToken {
                    list.add(PercentEncoding.formEncode(token.value), variable(token, "refresh_token"), encoding: "form-encoded")
                }
            case .bearer, .header:
                break
            }
        }
        for user in config.proxyAuth?.users ?? [] {
            let variable = variableName(for: user.password, upstream: "GATEWAY_PROXY", key: "password")
            list.add(user.password.value, variable)
            list.add(base64(user.username + ":" + user.password.value), variable, encoding: "base64")
        }
        return list.longestFirst
    }

    /// This redactor, also scrubbing `runtime` (secrets obtained at run time:
    /// OAuth2 tokens), each as `[REDACTED:<NAME>]`; itself when there are none
    /// or redaction is off. Called once per record on the writer thread.
    public func adding(runtimeSecrets runtime: [RuntimeSecret]) -> TraceRedactor {
        guard enabled, !runtime.isEmpty else { return self }
        var list = ScrubList(secretValues)
        for secret in runtime {
            list.add(secret.value, ShellQuoting.sanitizedVariableName(secret.name.uppercased()))
        }
        var copy = self
        copy.secretValues = list.longestFirst
        return copy
    }

    private static func base64(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
    }

    /// Replaces every secret value in `text`.
    public func scrub(_ text: String) -> String {
        guard enabled, !secretValues.isEmpty else { return text }
        var text = text
        guard text.withUTF8({ containsSecret(UnsafeRawBufferPointer($0)) }) else { return text }
        // A valid UTF-8 needle matches valid UTF-8 text only at character
        // boundaries: the result is valid UTF-8 again.
        return String(decoding: scrub(bytes: Array(text.utf8)), as: UTF8.self)
    }

    /// Replaces every secret value in `bytes`, valid UTF-8 or not.
    func scrub(bytes: [UInt8]) -> [UInt8] {
        guard enabled, !secretValues.isEmpty else { return bytes }
        var result = bytes
        for (value, placeholder) in secretValues {
            if let replaced = Self.replacing(value, with: placeholder, in: result) { result = replaced }
        }
        return result
    }

    /// Whether ``scrub(_:)`` could change `bytes`: a secret value occurs in them.
    func containsSecret(_ bytes: UnsafeRawBufferPointer) -> Bool {
        enabled && secretValues.contains { Self.contains(bytes, $0.value) }
    }

    /// Whether `needle` occurs in `text`, by bytes (`memchr` for its first byte,
    /// then `memcmp`): `String.contains` here is Foundation's, which bridges to
    /// `NSString`; a generic collection search is slow too.
    static func contains(_ text: String, _ needle: String) -> Bool {
        var text = text
        return text.withUTF8 { contains(UnsafeRawBufferPointer($0), needle) }
    }

    static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: String) -> Bool {
        firstOffset(of: needle, in: haystack, from: 0) != nil
    }

    /// The offset of the first `needle` in `haystack` at or after `start`.
    static func firstOffset(of needle: String, in haystack: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var needle = needle
        return needle.withUTF8 { needle in
            guard let base = haystack.baseAddress, let pattern = needle.baseAddress, let first = needle.first,
                start >= 0, needle.count <= haystack.count - start
            else { return nil }
            let lastStart = haystack.count - needle.count
            var offset = start
            while offset <= lastStart {
                guard let found = memchr(base + offset, Int32(first), lastStart - offset + 1) else { return nil }
                offset = base.distance(to: UnsafeRawPointer(found))
                if memcmp(base + offset, pattern, needle.count) == 0 { return offset }
                offset += 1
            }
            return nil
        }
    }

    /// `bytes` with every `needle` (left to right, not overlapping) replaced; nil when there is none.
    static func replacing(_ needle: String, with replacement: String, in bytes: [UInt8]) -> [UInt8]? {
        bytes.withUnsafeBytes { haystack -> [UInt8]? in
            guard var found = firstOffset(of: needle, in: haystack, from: 0) else { return nil }
            let length = needle.utf8.count
            var out: [UInt8] = []
            out.reserveCapacity(haystack.count + replacement.utf8.count)
            var copied = 0
            while true {
                out.append(contentsOf: haystack[copied..<found])
                out.append(contentsOf: replacement.utf8)
                copied = found + length
                guard let next = firstOffset(of: needle, in: haystack, from: copied) else { break }
                found = next
            }
            out.append(contentsOf: haystack[copied...])
            return out
        }
    }
}

/// Secret values and their placeholders as they are gathered: too short ones
/// left out, each value once (the first placeholder given wins).
private struct ScrubList {
    private var entries: [(value: String, placeholder: String)]
    private var values: Set<String>

    init(_ entries: [(value: String, placeholder: String)] = []) {
        self.entries = entries
        self.values = Set(entries.map(\.value))
    }

    /// Adds `value`, shown as `[REDACTED:<variable>]` or `[REDACTED:<variable>:<encoding>]`.
    mutating func add(_ value: String, _ variable: String, encoding: String? = nil) {
        guard value.utf8.count >= TraceRedactor.minimumScrubbedLength, values.insert(value).inserted else { return }
        entries.append((value, encoding.map { "[REDACTED:\(variable):\($0)]" } ?? "[REDACTED:\(variable)]"))
    }

    /// Longest first: a value inside a longer one is replaced after it.
    var longestFirst: [(value: String, placeholder: String)] {
        entries.sorted { $0.value.utf8.count > $1.value.utf8.count }
    }
}
