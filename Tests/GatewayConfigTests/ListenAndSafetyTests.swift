import GatewayConfig
import Testing

@Suite("listen and the open-proxy safety rule")
struct ListenAndSafetyTests {
    static let loopback: [(String, Bool)] = [
        ("127.0.0.1:8080", true),
        ("127.1.2.3:8080", true),
        ("localhost:8080", true),
        ("LOCALHOST:8080", true),
        ("[::1]:8080", true),
        ("[0:0:0:0:0:0:0:1]:8080", true),
        ("[::ffff:127.0.0.1]:8080", true),
        ("0.0.0.0:8080", false),
        ("[::]:8080", false),
        ("192.168.1.10:8080", false),
        ("128.0.0.1:8080", false),
        ("gateway.example.com:8080", false),
    ]

    @Test(arguments: loopback)
    func isLoopback(text: String, expected: Bool) throws {
        let address = try #require(BindAddress(text))
        #expect(address.isLoopback == expected)
    }

    @Test func parsesHostAndPort() {
        #expect(BindAddress("127.0.0.1:8080") == BindAddress(host: "127.0.0.1", port: 8080))
        #expect(BindAddress("[::1]:0") == BindAddress(host: "::1", port: 0))
        #expect(BindAddress("[::1]:0")?.description == "[::1]:0")
        #expect(BindAddress("localhost:65535")?.port == 65535)
    }

    @Test(arguments: ["8080", "127.0.0.1", "127.0.0.1:", ":8080", "::1:8080", "[::1]8080", "[nope]:80", "host name:80", "1.2.3.999:80"])
    func rejectsMalformedBindAddress(text: String) {
        #expect(BindAddress(text) == nil)
        TestSupport.expectError("listen:\n  admin: \"\(text)\"\n", keyPath: "listen.admin", contains: "got '\(text)'")
    }

    /// Proxy and admin on one port: an error where the two binds would clash.
    @Test(arguments: [
        ("127.0.0.1:9000", "127.0.0.1:9000", true),
        ("localhost:9000", "LOCALHOST:9000", true),
        ("0.0.0.0:9000", "127.0.0.1:9000", true),
        ("[::]:9000", "127.0.0.1:9000", true),
        ("127.0.0.1:9000", "[::]:9000", true),
        ("0.0.0.0:9000", "[::1]:9000", false),
        ("127.0.0.1:9000", "127.0.0.2:9000", false),
        ("127.0.0.1:9000", "127.0.0.1:9001", false),
        ("127.0.0.1:0", "127.0.0.1:0", false),
    ])
    func proxyAndAdminMustNotClash(proxy: String, admin: String, clashes: Bool) {
        let yaml = "open: true\nlisten:\n  proxy: \"\(proxy)\"\n  admin: \"\(admin)\"\n"
        let error = TestSupport.error(of: yaml)
        if clashes {
            #expect(error?.keyPath == "listen.admin", "\(String(describing: error))")
        } else {
            #expect(error == nil, "\(String(describing: error))")
        }
    }

    @Test func portZeroIsAllowedForListeners() {
        let config = TestSupport.parse("listen:\n  proxy: 127.0.0.1:0\n  admin: 127.0.0.1:0\n")
        #expect(config?.listen.proxy.port == 0)
        #expect(config?.listen.admin.port == 0)
    }

    @Test func portAbove65535IsRejected() {
        TestSupport.expectError(
            "listen:\n  proxy: 127.0.0.1:65536\n", keyPath: "listen.proxy", contains: "port must be an integer from 0 to 65535")
    }

    @Test func unquotedIPv6ExplainsQuoting() {
        // `[::1]:8080` unquoted is not even valid YAML: the error says why.
        TestSupport.expectError("listen:\n  proxy: [::1]:8080\n", keyPath: "", contains: "must be quoted")
        // `[::1]` unquoted is a one-element list.
        TestSupport.expectError("listen:\n  proxy: [\"::1\"]\n", keyPath: "listen.proxy", contains: "must be quoted")
    }

    // MARK: Safety

    @Test func nonLoopbackWithoutAuthIsRefused() {
        guard let error = TestSupport.error(of: "listen:\n  proxy: 0.0.0.0:8080\n") else {
            Issue.record("an open proxy was accepted")
            return
        }
        #expect(error.keyPath == "listen.proxy")
        #expect(
            error.message
                == "refusing to listen on 0.0.0.0:8080 without proxy_auth: that would be an open proxy; set open: true to allow it explicitly"
        )
        #expect(
            error.description
                == "test.yaml: listen.proxy: refusing to listen on 0.0.0.0:8080 without proxy_auth: that would be an open proxy; set open: true to allow it explicitly"
        )
    }

    @Test func ipv6AnyWithoutAuthIsRefused() {
        TestSupport.expectError(
            "listen:\n  proxy: \"[::]:8080\"\n", keyPath: "listen.proxy", contains: "refusing to listen on [::]:8080 without proxy_auth")
    }

    @Test func openTrueAllowsNonLoopback() {
        let config = TestSupport.parse("open: true\nlisten:\n  proxy: 0.0.0.0:8080\n")
        #expect(config?.open == true)
        #expect(config?.listen.proxy == BindAddress(host: "0.0.0.0", port: 8080))
    }

    @Test func proxyAuthAllowsNonLoopback() {
        let yaml = """
            listen:
              proxy: 0.0.0.0:8080
            proxy_auth:
              users:
                - username: dev
                  password_env: PW
            """
        #expect(TestSupport.parse(yaml, environment: ["PW": "x"])?.proxyAuth?.users.count == 1)
    }

    @Test func adminOnNonLoopbackIsNotAProxy() {
        #expect(TestSupport.parse("listen:\n  admin: 0.0.0.0:9090\n")?.listen.admin.isLoopback == false)
    }

    @Test func validateCatchesAConfigChangedInCode() {
        var config = GatewayConfig()
        config.listen.proxy = BindAddress(host: "0.0.0.0", port: 8080)
        #expect(throws: ConfigError.self) { try config.validate(file: "flags") }
        config.open = true
        #expect(throws: Never.self) { try config.validate(file: "flags") }
    }
}
