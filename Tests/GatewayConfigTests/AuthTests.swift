import Foundation
import GatewayConfig
import Testing

@Suite("upstreams[].auth: bearer, header, basic, query")
struct AuthTests {
    static func auth(_ body: String) -> String {
        "upstreams:\n  - name: api\n    hosts: [api.example.com]\n    auth:\n" + body
    }

    static func decoded(_ body: String, environment: [String: String] = [:]) -> AuthConfig? {
        TestSupport.parse(auth(body), environment: environment)?.upstreams.first?.auth
    }

    @Test func absentMeansNone() {
        #expect(TestSupport.parse("upstreams:\n  - name: a\n    hosts: [a.com]\n")?.upstreams.first?.auth == nil)
        #expect(TestSupport.parse("upstreams:\n  - name: a\n    hosts: [a.com]\n    auth:\n")?.upstreams.first?.auth == nil)
    }

    @Test func bearerFromEnvironment() {
        let auth = Self.decoded("      type: bearer\n      token_env: GITHUB_TOKEN\n", environment: ["GITHUB_TOKEN": "ghp-1"])
        #expect(auth == AuthConfig(kind: .bearer(token: Secret(source: .env("GITHUB_TOKEN"), value: "ghp-1"))))
        #expect(auth?.clientAuth == .replace)
        #expect(auth?.typeName == "bearer")
    }

    @Test func flowStyleMappingWorks() {
        let yaml = "upstreams:\n  - name: gh\n    hosts: [api.github.com]\n    auth: { type: bearer, token_env: T, client_auth: keep }\n"
        let auth = TestSupport.parse(yaml, environment: ["T": "x"])?.upstreams.first?.auth
        #expect(auth == AuthConfig(kind: .bearer(token: Secret(source: .env("T"), value: "x")), clientAuth: .keep))
    }

    @Test func bearerFromFileAndInline() throws {
        let file = try TestSupport.temporaryFile(named: "token", contents: "file-token\n")
        defer { TestSupport.removeDirectory(of: file) }
        #expect(
            Self.decoded("      type: bearer\n      token_file: \(file.path)\n")?.kind
                == .bearer(token: Secret(source: .file(file.path), value: "file-token")))
        #expect(Self.decoded("      type: bearer\n      token: inline-token\n")?.kind == .bearer(token: Secret(source: .inline, value: "inline-token")))
    }

    @Test func header() {
        let auth = Self.decoded("      type: header\n      name: X-API-Key\n      value_env: KEY\n", environment: ["KEY": "k1"])
        #expect(auth?.kind == .header(name: "X-API-Key", value: Secret(source: .env("KEY"), value: "k1")))
    }

    @Test func basic() {
        let auth = Self.decoded("      type: basic\n      username: svc\n      password_env: PW\n", environment: ["PW": "p1"])
        #expect(auth?.kind == .basic(username: "svc", password: Secret(source: .env("PW"), value: "p1")))
    }

    @Test func query() {
        let auth = Self.decoded("      type: query\n      param: api_key\n      value_env: KEY\n", environment: ["KEY": "k1"])
        #expect(auth?.kind == .query(parameter: "api_key", value: Secret(source: .env("KEY"), value: "k1")))
    }

    @Test func typeAndClientAuthAreCaseInsensitive() {
        let auth = Self.decoded("      type: Bearer\n      token: t\n      client_auth: KEEP\n")
        #expect(auth?.clientAuth == .keep)
    }

    @Test func typeIsRequiredAndKnown() {
        TestSupport.expectError(
            Self.auth("      token: t\n"), keyPath: "upstreams[0].auth",
            contains: "missing required key 'type' (one of: bearer, header, basic, query, oauth2)")
        TestSupport.expectError(
            Self.auth("      type: digest\n"), keyPath: "upstreams[0].auth.type",
            contains: "expected one of: bearer, header, basic, query, oauth2; got 'digest'")
        TestSupport.expectError(Self.auth("      - bearer\n"), keyPath: "upstreams[0].auth", contains: "expected a mapping")
    }

    @Test func clientAuthMustBeKnown() {
        TestSupport.expectError(
            Self.auth("      type: bearer\n      token: t\n      client_auth: merge\n"), keyPath: "upstreams[0].auth.client_auth",
            contains: "expected one of: replace, keep; got 'merge'")
    }

    @Test func unknownKeysAreErrorsWithSuggestions() {
        TestSupport.expectError(
            Self.auth("      type: bearer\n      token_evn: T\n"), keyPath: "upstreams[0].auth.token_evn",
            contains: "did you mean \"token_env\"?")
    }

    @Test(arguments: [
        ("      type: bearer\n      token: t\n      name: X\n", "name", "bearer"),
        ("      type: header\n      name: X\n      value: v\n      token: t\n", "token", "header"),
        ("      type: basic\n      username: u\n      password: p\n      param: x\n", "param", "basic"),
        ("      type: query\n      param: k\n      value: v\n      username: u\n", "username", "query"),
        ("      type: bearer\n      token: t\n      grant: refresh_token\n", "grant", "bearer"),
    ])
    func keysOfOtherTypesAreNamed(body: String, key: String, type: String) {
        TestSupport.expectError(
            Self.auth(body), keyPath: "upstreams[0].auth.\(key)", contains: "'\(key)' does not apply to type \(type); expected one of:")
    }

    @Test(arguments: [
        ("      type: bearer\n", "exactly one of token_env, token_file, token is required; found none"),
        ("      type: header\n      name: X-Key\n", "exactly one of value_env, value_file, value is required; found none"),
        ("      type: basic\n      username: u\n", "exactly one of password_env, password_file, password is required; found none"),
        ("      type: query\n      param: k\n", "exactly one of value_env, value_file, value is required; found none"),
        ("      type: bearer\n      token: a\n      token_env: B\n", "found token_env and token"),
        ("      type: header\n      name: X\n      value_file: /x\n      value: a\n", "found value_file and value"),
    ])
    func exactlyOneSourcePerSecret(body: String, fragment: String) {
        TestSupport.expectError(Self.auth(body), keyPath: "upstreams[0].auth", contains: fragment, environment: ["B": "b"])
    }

    @Test(arguments: [
        ("      type: header\n      value: v\n", "missing required key 'name'"),
        ("      type: basic\n      password: p\n", "missing required key 'username'"),
        ("      type: query\n      value: v\n", "missing required key 'param'"),
    ])
    func requiredFieldsPerType(body: String, fragment: String) {
        TestSupport.expectError(Self.auth(body), keyPath: "upstreams[0].auth", contains: fragment)
    }

    @Test func secretSourcesFailLikeProxyAuthPasswords() {
        TestSupport.expectError(
            Self.auth("      type: bearer\n      token_env: GITHUB_TOKEN\n"), keyPath: "upstreams[0].auth.token_env",
            contains: "environment variable GITHUB_TOKEN is not set")
        TestSupport.expectError(
            Self.auth("      type: bearer\n      token_env: GITHUB_TOKEN\n"), keyPath: "upstreams[0].auth.token_env",
            contains: "environment variable GITHUB_TOKEN is empty", environment: ["GITHUB_TOKEN": ""])
        TestSupport.expectError(
            Self.auth("      type: header\n      name: X\n      value_file: /nonexistent/key\n"), keyPath: "upstreams[0].auth.value_file",
            contains: "secret file /nonexistent/key does not exist")
        TestSupport.expectError(
            Self.auth("      type: bearer\n      token: \"\"\n"), keyPath: "upstreams[0].auth.token", contains: "must not be empty")
        TestSupport.expectError(
            Self.auth("      type: bearer\n      token_env:\n"), keyPath: "upstreams[0].auth.token_env", contains: "must not be empty")
    }

    @Test func unreadableSecretFileIsAnError() throws {
        guard getuid() != 0 else { return }
        let file = try TestSupport.temporaryFile(named: "key", contents: "x")
        defer { TestSupport.removeDirectory(of: file) }
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: file.path)
        TestSupport.expectError(
            Self.auth("      type: basic\n      username: u\n      password_file: \(file.path)\n"),
            keyPath: "upstreams[0].auth.password_file", contains: "is not readable")
    }

    @Test func relativeSecretFileResolvesAgainstTheConfigFile() throws {
        let secret = try TestSupport.temporaryFile(named: "token.txt", contents: "from-file\n")
        defer { TestSupport.removeDirectory(of: secret) }
        let configFile = secret.deletingLastPathComponent().appendingPathComponent("gateway.yaml")
        try Data(Self.auth("      type: bearer\n      token_file: token.txt\n").utf8).write(to: configFile)
        let config = try ConfigLoader.load(path: configFile.path, environment: [:])
        #expect(config.upstreams.first?.auth?.kind == .bearer(token: Secret(source: .file(secret.standardizedFileURL.path), value: "from-file")))
    }

    @Test(arguments: ["X API", "X:Key", "", "Ä-Key"])
    func headerNameMustBeAToken(name: String) {
        TestSupport.expectError(
            Self.auth("      type: header\n      name: \"\(name)\"\n      value: v\n"), keyPath: "upstreams[0].auth.name",
            contains: "not a valid header name")
    }

    @Test(arguments: ["Host", "content-length", "Transfer-Encoding", "Connection", "Proxy-Authorization", "TE"])
    func headerNameMustNotBeManagedByTheGateway(name: String) {
        TestSupport.expectError(
            Self.auth("      type: header\n      name: \(name)\n      value: v\n"), keyPath: "upstreams[0].auth.name",
            contains: "cannot carry a credential")
    }

    @Test func authorizationIsAFineHeaderName() {
        #expect(Self.decoded("      type: header\n      name: Authorization\n      value: \"Token abc\"\n") != nil)
    }

    @Test func basicUsernameRules() {
        TestSupport.expectError(
            Self.auth("      type: basic\n      username: \"a:b\"\n      password: p\n"), keyPath: "upstreams[0].auth.username",
            contains: "must not contain ':'")
        TestSupport.expectError(
            Self.auth("      type: basic\n      username: \"\"\n      password: p\n"), keyPath: "upstreams[0].auth.username",
            contains: "must not be empty")
    }

    @Test(arguments: ["", "api key", "a&b", "a=b", "a#b", "k%20"])
    func queryParameterMustBeAPlainName(name: String) {
        TestSupport.expectError(
            Self.auth("      type: query\n      param: \"\(name)\"\n      value: v\n"), keyPath: "upstreams[0].auth.param",
            contains: "must be a non-empty name of letters, digits and - . _ ~")
    }

    @Test(arguments: [
        ("      type: bearer\n      token_env: T\n", "upstreams[0].auth.token_env"),
        ("      type: header\n      name: X-Key\n      value_env: T\n", "upstreams[0].auth.value_env"),
        ("      type: basic\n      username: u\n      password_env: T\n", "upstreams[0].auth.password_env"),
    ])
    func headerBoundSecretsMustNotContainLineBreaks(body: String, keyPath: String) {
        let environment = ["T": "abc\r\nX-Injected: topsecret"]
        TestSupport.expectError(
            Self.auth(body), keyPath: keyPath, contains: "the secret <redacted from $T> contains a line break", environment: environment)
        #expect(TestSupport.error(of: Self.auth(body), environment: environment)?.description.contains("topsecret") == false)
    }

    @Test func inlineSecretWithLineBreakIsNamedByItsKey() {
        TestSupport.expectError(
            Self.auth("      type: bearer\n      token: \"a\\nb\"\n"), keyPath: "upstreams[0].auth.token",
            contains: "the secret <redacted> contains a line break")
    }

    @Test func secretsListsEveryCredential() {
        let auth = Self.decoded("      type: basic\n      username: u\n      password_env: PW\n", environment: ["PW": "p"])
        #expect(auth?.secrets.map(\.key) == ["password"])
        #expect(auth?.secrets.first?.secret.source == .env("PW"))
    }
}
