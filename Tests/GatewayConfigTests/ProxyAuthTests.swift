import Foundation
import GatewayConfig
import Testing

@Suite("proxy_auth and secrets")
struct ProxyAuthTests {
    static func yaml(user: String) -> String {
        "proxy_auth:\n  users:\n    - username: dev\n\(user)"
    }

    @Test func passwordFromEnvironment() {
        let config = TestSupport.parse(
            Self.yaml(user: "      password_env: GATEWAY_PROXY_PASSWORD\n"), environment: ["GATEWAY_PROXY_PASSWORD": "pw1"])
        let user = config?.proxyAuth?.users.first
        #expect(user?.username == "dev")
        #expect(user?.password == Secret(source: .env("GATEWAY_PROXY_PASSWORD"), value: "pw1"))
        #expect(config?.proxyAuth?.realm == "gateway")
    }

    @Test func unsetEnvironmentVariableIsNamed() {
        TestSupport.expectError(
            Self.yaml(user: "      password_env: GATEWAY_PROXY_PASSWORD\n"),
            keyPath: "proxy_auth.users[0].password_env",
            contains: "environment variable GATEWAY_PROXY_PASSWORD is not set"
        )
    }

    @Test func emptyEnvironmentVariableIsAnError() {
        TestSupport.expectError(
            Self.yaml(user: "      password_env: PW\n"),
            keyPath: "proxy_auth.users[0].password_env",
            contains: "environment variable PW is empty",
            environment: ["PW": ""]
        )
    }

    @Test func passwordFromFileTrimsTrailingNewline() throws {
        let file = try TestSupport.temporaryFile(named: "pw", contents: "file-secret\r\n")
        defer { TestSupport.removeDirectory(of: file) }
        let config = TestSupport.parse(Self.yaml(user: "      password_file: \(file.path)\n"))
        #expect(config?.proxyAuth?.users.first?.password == Secret(source: .file(file.path), value: "file-secret"))
    }

    @Test func missingPasswordFileIsNamed() {
        TestSupport.expectError(
            Self.yaml(user: "      password_file: /nonexistent/pw.txt\n"),
            keyPath: "proxy_auth.users[0].password_file",
            contains: "secret file /nonexistent/pw.txt does not exist"
        )
    }

    @Test func unreadablePasswordFileIsAnError() throws {
        guard getuid() != 0 else { return }  // root reads anything
        let file = try TestSupport.temporaryFile(named: "pw", contents: "x")
        defer { TestSupport.removeDirectory(of: file) }
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: file.path)
        TestSupport.expectError(
            Self.yaml(user: "      password_file: \(file.path)\n"),
            keyPath: "proxy_auth.users[0].password_file", contains: "is not readable")
    }

    @Test func emptyPasswordFileIsAnError() throws {
        let file = try TestSupport.temporaryFile(named: "pw", contents: "\n")
        defer { TestSupport.removeDirectory(of: file) }
        TestSupport.expectError(
            Self.yaml(user: "      password_file: \(file.path)\n"),
            keyPath: "proxy_auth.users[0].password_file", contains: "is empty")
    }

    @Test func inlinePassword() {
        let config = TestSupport.parse(Self.yaml(user: "      password: \"inline pw\"\n"))
        #expect(config?.proxyAuth?.users.first?.password == Secret(source: .inline, value: "inline pw"))
    }

    @Test func exactlyOneSecretSource() {
        TestSupport.expectError(
            Self.yaml(user: "      password: a\n      password_env: B\n"),
            keyPath: "proxy_auth.users[0]",
            contains: "exactly one of password_env, password_file, password",
            environment: ["B": "b"]
        )
        TestSupport.expectError(
            "proxy_auth:\n  users:\n    - username: dev\n",
            keyPath: "proxy_auth.users[0]",
            contains: "exactly one of password_env, password_file, password is required; found none"
        )
    }

    @Test func usersMustBeNonEmpty() {
        TestSupport.expectError("proxy_auth:\n  users: []\n", keyPath: "proxy_auth.users", contains: "at least one user")
        TestSupport.expectError("proxy_auth:\n  realm: x\n", keyPath: "proxy_auth.users", contains: "at least one user")
    }

    @Test func usernameRules() {
        TestSupport.expectError(
            "proxy_auth:\n  users:\n    - username: \"\"\n      password: x\n",
            keyPath: "proxy_auth.users[0].username", contains: "must not be empty")
        TestSupport.expectError(
            "proxy_auth:\n  users:\n    - username: \"a:b\"\n      password: x\n",
            keyPath: "proxy_auth.users[0].username", contains: "must not contain ':'")
        TestSupport.expectError(
            "proxy_auth:\n  users:\n    - username: a\n      password: x\n    - username: a\n      password: y\n",
            keyPath: "proxy_auth.users[1].username", contains: "duplicate username 'a'")
        TestSupport.expectError(
            "proxy_auth:\n  users:\n    - password: x\n",
            keyPath: "proxy_auth.users[0]", contains: "missing required key 'username'")
    }

    @Test func realmMustBeHeaderSafe() {
        TestSupport.expectError(
            "proxy_auth:\n  realm: 'a\"b'\n  users:\n    - username: a\n      password: x\n",
            keyPath: "proxy_auth.realm", contains: "must not contain quotes")
    }

    @Test func secretsNeverPrintTheirValue() {
        let env = Secret(source: .env("GATEWAY_PROXY_PASSWORD"), value: "topsecret-1")
        let file = Secret(source: .file("/run/secrets/pw"), value: "topsecret-2")
        let inline = Secret(source: .inline, value: "topsecret-3")
        #expect(env.description == "<redacted from $GATEWAY_PROXY_PASSWORD>")
        #expect(file.description == "<redacted from file /run/secrets/pw>")
        #expect(inline.description == "<redacted>")
        let user = ProxyUser(username: "dev", password: env)
        let config = GatewayConfig(proxyAuth: ProxyAuthConfig(users: [user, ProxyUser(username: "x", password: file)]))
        var dumped = ""
        dump(config, to: &dumped)
        for text in [
            "\(env)", "\(file)", "\(inline)", String(reflecting: env), String(reflecting: inline),
            "\(user)", String(reflecting: user), "\(config)", dumped,
        ] {
            #expect(!text.contains("topsecret"), "\(text)")
        }
    }

    @Test func authenticateChecksBothFields() {
        let auth = ProxyAuthConfig(users: [
            ProxyUser(username: "a", password: Secret(source: .inline, value: "pa")),
            ProxyUser(username: "b", password: Secret(source: .inline, value: "pb")),
        ])
        #expect(auth.authenticate(username: "b", password: "pb")?.username == "b")
        #expect(auth.authenticate(username: "a", password: "pb") == nil)
        #expect(auth.authenticate(username: "a", password: "p") == nil)
        #expect(auth.authenticate(username: "c", password: "pa") == nil)
    }

    @Test func errorsNeverContainSecretValues() {
        let yaml = """
            proxy_auth:
              users:
                - username: dev
                  password: inline-topsecret
                - username: dev
                  password_env: PW
            """
        let error = TestSupport.error(of: yaml, environment: ["PW": "env-topsecret"])
        #expect(error?.keyPath == "proxy_auth.users[1].username")
        #expect(error?.description.contains("topsecret") == false)
    }
}
