import Foundation
import GatewayConfig
import GatewayCore
import Testing

@Suite("upstreams")
struct UpstreamTests {
    static let pin = "sha256/t+RrJf6iZSp23mXk9gOWos7bnmcAqEtmon+IhMOY/CM="

    static func one(_ body: String) -> String {
        "upstreams:\n  - name: api\n    hosts: [api.example.com]\n" + body
    }

    @Test func minimalUpstreamUsesStandardTLS() {
        let upstream = TestSupport.parse(Self.one(""))?.upstreams.first
        #expect(upstream == UpstreamConfig(name: "api", hosts: [HostPattern("api.example.com")!]))
        #expect(upstream?.tls == .standard)
        #expect(upstream?.origin == nil)
    }

    @Test func nameRules() {
        TestSupport.expectError(
            "upstreams:\n  - name: \"\"\n    hosts: [a.com]\n", keyPath: "upstreams[0].name", contains: "must not be empty")
        TestSupport.expectError(
            "upstreams:\n  - name: my api\n    hosts: [a.com]\n", keyPath: "upstreams[0].name",
            contains: "only letters, digits, '-' and '_'")
        TestSupport.expectError(
            "upstreams:\n  - name: a\n    hosts: [a.com]\n  - name: a\n    hosts: [b.com]\n",
            keyPath: "upstreams[1].name", contains: "duplicate upstream name 'a'")
        TestSupport.expectError("upstreams:\n  - hosts: [a.com]\n", keyPath: "upstreams[0]", contains: "missing required key 'name'")
    }

    @Test func hostsRules() {
        TestSupport.expectError("upstreams:\n  - name: a\n", keyPath: "upstreams[0]", contains: "missing required key 'hosts'")
        TestSupport.expectError(
            "upstreams:\n  - name: a\n    hosts: []\n", keyPath: "upstreams[0].hosts", contains: "at least one host pattern")
        TestSupport.expectError(
            "upstreams:\n  - name: a\n    hosts: [a.com, \"b.*\"]\n", keyPath: "upstreams[0].hosts[1]", contains: "not a host pattern")
    }

    static let origins: [(String, UpstreamOrigin)] = [
        ("https://api.example.com", UpstreamOrigin(scheme: .https, host: "api.example.com", port: 443)),
        ("https://api.example.com/", UpstreamOrigin(scheme: .https, host: "api.example.com", port: 443)),
        ("http://api.example.com", UpstreamOrigin(scheme: .http, host: "api.example.com", port: 80)),
        ("http://127.0.0.1:8081", UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: 8081)),
        ("HTTPS://[::1]:8443", UpstreamOrigin(scheme: .https, host: "::1", port: 8443)),
    ]

    @Test(arguments: origins)
    func parsesOrigin(text: String, expected: UpstreamOrigin) {
        #expect(TestSupport.parse(Self.one("    origin: \"\(text)\"\n"))?.upstreams.first?.origin == expected)
    }

    @Test(arguments: [
        ("api.example.com", "expected an origin like"),
        ("ftp://api.example.com", "scheme must be http or https"),
        ("https://api.example.com/v1", "no path"),
        ("https://api.example.com?x=1", "no path"),
        ("https://user:pw@api.example.com", "credentials"),
        ("https://api.example.com:0", "from 1 to 65535"),
        ("https://api.example.com:99999", "from 1 to 65535"),
        ("https://", "not a valid host"),
        ("https://bad host", "not a valid host"),
    ])
    func rejectsBadOrigin(text: String, fragment: String) {
        TestSupport.expectError(Self.one("    origin: \"\(text)\"\n"), keyPath: "upstreams[0].origin", contains: fragment)
    }

    @Test func originCredentialsAreNotEchoed() {
        let error = TestSupport.error(of: Self.one("    origin: \"https://user:pw-topsecret@api.example.com\"\n"))
        #expect(error?.keyPath == "upstreams[0].origin")
        #expect(error?.description.contains("topsecret") == false)
    }

    @Test func tlsSettingsDecode() {
        let tls = TestSupport.parse(
            Self.one("    tls:\n      pins: [\(Self.pin)]\n      pin_mode: report\n      insecure_skip_verify: true\n")
        )?.upstreams.first?.tls
        #expect(tls == UpstreamTLSSettings(pins: [SPKIPin(Self.pin)!], pinMode: .report, insecureSkipVerify: true))
    }

    @Test func malformedPinNamesItsIndex() {
        guard let error = TestSupport.error(of: Self.one("    tls:\n      pins: [\(Self.pin), sha256/short=]\n")) else {
            Issue.record("bad pin accepted")
            return
        }
        #expect(error.keyPath == "upstreams[0].tls.pins[1]")
        #expect(
            error.description
                == "test.yaml: upstreams[0].tls.pins[1]: not a pin: expected 'sha256/' followed by 44 base64 characters (32 bytes)"
        )
    }

    @Test(arguments: [
        "t+RrJf6iZSp23mXk9gOWos7bnmcAqEtmon+IhMOY/CM=",  // no prefix
        "sha1/t+RrJf6iZSp23mXk9gOWos7bnmcAqEtmon+IhMOY/CM=",
        "sha256/!!RrJf6iZSp23mXk9gOWos7bnmcAqEtmon+IhMOY/CM=",
        "sha256/AAAA",
    ])
    func rejectsBadPins(pin: String) {
        TestSupport.expectError(Self.one("    tls:\n      pins: [\"\(pin)\"]\n"), keyPath: "upstreams[0].tls.pins[0]", contains: "not a pin")
    }

    @Test func pinModeMustBeKnown() {
        TestSupport.expectError(
            Self.one("    tls:\n      pin_mode: strict\n"), keyPath: "upstreams[0].tls.pin_mode",
            contains: "expected one of: enforce, report; got 'strict'")
    }

    @Test func caFileMustExist() {
        TestSupport.expectError(
            Self.one("    tls:\n      ca_file: /nonexistent/ca.pem\n"), keyPath: "upstreams[0].tls.ca_file",
            contains: "CA file /nonexistent/ca.pem does not exist")
    }

    @Test func caFileMustBeReadable() throws {
        guard getuid() != 0 else { return }
        let file = try TestSupport.temporaryFile(named: "ca.pem", contents: "pem")
        defer { TestSupport.removeDirectory(of: file) }
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: file.path)
        TestSupport.expectError(
            Self.one("    tls:\n      ca_file: \(file.path)\n"), keyPath: "upstreams[0].tls.ca_file", contains: "is not readable")
    }

    @Test func existingCAFileIsKept() throws {
        let file = try TestSupport.temporaryFile(named: "ca.pem", contents: "pem")
        defer { TestSupport.removeDirectory(of: file) }
        let tls = TestSupport.parse(Self.one("    tls:\n      ca_file: \(file.path)\n"))?.upstreams.first?.tls
        #expect(tls?.caFile == file.path)
    }

    @Test func tlsWithPlainHttpOriginIsAMistake() {
        TestSupport.expectError(
            Self.one("    origin: http://127.0.0.1:8081\n    tls:\n      pins: [\(Self.pin)]\n"),
            keyPath: "upstreams[0].tls", contains: "no effect")
    }

    @Test func errorsInLaterUpstreamsUseTheirIndex() {
        TestSupport.expectError(
            "upstreams:\n  - name: a\n    hosts: [a.com]\n  - name: b\n    hosts: [b.com]\n    tls:\n      insecure_skip_verify: maybe\n",
            keyPath: "upstreams[1].tls.insecure_skip_verify", contains: "expected true or false, got 'maybe'")
    }

    @Test func httpVersionDefaultsToAuto() {
        #expect(TestSupport.parse(Self.one(""))?.upstreams.first?.httpVersion == .auto)
    }

    @Test(arguments: [("auto", UpstreamHTTPVersion.auto), ("http1", .http1), ("http2", .http2), ("HTTP2", .http2)])
    func httpVersionDecodes(text: String, expected: UpstreamHTTPVersion) {
        #expect(TestSupport.parse(Self.one("    http_version: \(text)\n"))?.upstreams.first?.httpVersion == expected)
    }

    @Test func httpVersionMustBeKnown() {
        TestSupport.expectError(
            Self.one("    http_version: h2\n"), keyPath: "upstreams[0].http_version",
            contains: "expected one of: auto, http1, http2; got 'h2'")
    }

    @Test func httpVersionSurvivesTheRedactedYAML() throws {
        let config = try #require(TestSupport.parse(Self.one("    origin: http://127.0.0.1:8081\n    http_version: http2\n")))
        #expect(config.redactedYAML().contains("http_version: http2"))
        let reloaded = try ConfigLoader.parse(yaml: config.redactedYAML(), file: "r.yaml", environment: [:])
        #expect(reloaded.upstreams.first?.httpVersion == .http2)
    }
}
