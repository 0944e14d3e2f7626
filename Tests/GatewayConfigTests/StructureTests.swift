import Foundation
import GatewayConfig
import Testing

@Suite("Unknown keys, types, syntax, files")
struct StructureTests {
    @Test func unknownKeyInSectionNamesTheKeyAndTheChoices() {
        TestSupport.expectError(
            "access:\n  alow: [\"*\"]\n",
            keyPath: "access.alow",
            contains: "unknown key 'alow'; expected one of: allow, deny, connect_ports"
        )
    }

    @Test func unknownKeySuggestsTheClosestOne() {
        TestSupport.expectError("access:\n  alow: [\"*\"]\n", keyPath: "access.alow", contains: "did you mean \"allow\"?")
    }

    @Test(arguments: [
        ("listn:\n  proxy: 127.0.0.1:1\n", "listn"),
        ("listen:\n  proxi: 127.0.0.1:1\n", "listen.proxi"),
        ("limits:\n  max_header_bytes: 1KiB\n", "limits.max_header_bytes"),
        ("pool:\n  timeout: 1s\n", "pool.timeout"),
        ("proxy_auth:\n  realm: x\n  user: []\n", "proxy_auth.user"),
        ("proxy_auth:\n  users:\n    - username: a\n      password: b\n      pasword_env: C\n", "proxy_auth.users[0].pasword_env"),
        ("upstreams:\n  - name: a\n    hosts: [a.com]\n    host: b\n", "upstreams[0].host"),
        ("upstreams:\n  - name: a\n    hosts: [a.com]\n    tls:\n      pin: []\n", "upstreams[0].tls.pin"),
        ("logLevel: debug\n", "logLevel"),
    ])
    func unknownKeysAnywhereAreErrors(yaml: String, keyPath: String) {
        TestSupport.expectError(yaml, keyPath: keyPath, contains: "unknown key")
    }

    @Test func wrongTypesAreNamed() {
        TestSupport.expectError("open: yes\n", keyPath: "open", contains: "expected true or false, got 'yes'")
        TestSupport.expectError("debug: [1]\n", keyPath: "debug", contains: "expected true or false, got a list")
        TestSupport.expectError("listen: 127.0.0.1:8080\n", keyPath: "listen", contains: "expected a mapping")
        TestSupport.expectError("access:\n  allow: \"*\"\n", keyPath: "access.allow", contains: "expected a list")
        TestSupport.expectError("pool:\n  max_connections_per_host: many\n", keyPath: "pool.max_connections_per_host", contains: "expected an integer, got 'many'")
        TestSupport.expectError("upstreams:\n  name: a\n", keyPath: "upstreams", contains: "expected a list of upstreams")
        TestSupport.expectError("state_dir: {a: b}\n", keyPath: "state_dir", contains: "expected a string")
    }

    @Test func topLevelMustBeAMapping() {
        TestSupport.expectError("- a\n- b\n", keyPath: "", contains: "expected a mapping of settings at the top level")
    }

    @Test func logLevelAcceptsAllSwiftLogLevels() {
        for level in ["trace", "debug", "info", "notice", "warning", "error", "critical"] {
            #expect(TestSupport.parse("log_level: \(level)\n")?.logLevel.rawValue == level)
        }
        TestSupport.expectError(
            "log_level: verbose\n", keyPath: "log_level",
            contains: "expected one of: trace, debug, info, notice, warning, error, critical; got 'verbose'")
    }

    @Test func yamlSyntaxErrorsCarryLineAndColumn() {
        guard let error = TestSupport.error(of: "listen:\n  proxy: 127.0.0.1:8080\n   admin: [oops\n") else {
            Issue.record("broken YAML loaded")
            return
        }
        #expect(error.keyPath == "")
        #expect(error.message.contains("line "))
        #expect(error.message.contains("column "))
        #expect(error.description.hasPrefix("test.yaml: invalid YAML at line"))
    }

    @Test func yamlSyntaxErrorsDoNotEchoTheLine() {
        let yaml = "proxy_auth:\n  users:\n    - username: a\n      password: hunter2-secret: [\n"
        let error = TestSupport.error(of: yaml)
        #expect(error != nil)
        #expect(error?.description.contains("hunter2-secret") == false)
    }

    @Test func duplicateKeysAreErrors() {
        TestSupport.expectError("open: true\nopen: false\n", keyPath: "", contains: "duplicate key 'open'")
    }

    @Test func missingFileIsNamed() {
        let path = "/nonexistent/\(UUID().uuidString)/gateway.yaml"
        #expect(throws: ConfigError(file: path, keyPath: "", message: "config file does not exist")) {
            try ConfigLoader.load(path: path, environment: [:])
        }
    }

    @Test func directoryIsNotAConfigFile() {
        let path = FileManager.default.temporaryDirectory.path
        let error = #expect(throws: ConfigError.self) { try ConfigLoader.load(path: path, environment: [:]) }
        #expect(error?.file == path)
        #expect(error?.description.hasPrefix("\(path): ") == true)
    }

    @Test func errorDescriptionFormats() {
        #expect(ConfigError(file: "f.yaml", keyPath: "a.b[0]", message: "bad").description == "f.yaml: a.b[0]: bad")
        #expect(ConfigError(file: "f.yaml", keyPath: "", message: "bad").description == "f.yaml: bad")
    }

    /// Found by the config-decoding fuzz target: a key that is a list
    /// or a mapping at the top level gave an error with neither key path nor
    /// position, so nothing said where in the file it was.
    @Test func aComplexKeyIsLocatedByPosition() {
        let topLevel = TestSupport.error(of: "open: true\n? - name: api\n: 1\n")
        #expect(topLevel?.keyPath == "")
        #expect(topLevel?.message == "keys must be plain strings, got a list (line 2, column 3)")
        let nested = TestSupport.error(of: "listen:\n  ? {a: 1}\n  : 2\n")
        #expect(nested?.keyPath == "listen")
        #expect(nested?.message.hasSuffix("(line 2, column 5)") == true)
    }

    /// Found by the config-decoding fuzz target: an empty key at the
    /// top level (`?` alone) was an "unknown key ''" at the empty key path.
    @Test func anEmptyKeyIsLocatedByPosition() {
        let error = TestSupport.error(of: "open: true\n?\n")
        #expect(error?.keyPath == "")
        #expect(error?.message.hasPrefix("keys must not be empty (line 2, column ") == true, "\(error.map { "\($0)" } ?? "nil")")
    }
}
