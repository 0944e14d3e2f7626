import GatewayConfig
import GatewayCore
@testable import GatewayObservability
import Testing

/// ``TraceRedactor/redactedTarget(_:)``'s shortcut (``TraceRedactor/unchangedTarget(_:)``)
/// gives what the general path (``TraceRedactor/url(prefix:target:)``, its
/// parts joined) gives, and steps aside whenever that path would change something.
@Suite("Telemetry target redaction", .timeLimit(.minutes(1)))
struct TelemetryTargetTests {
    static var redactor: TraceRedactor {
        var config = GatewayConfig()
        config.trace.redactQuery = ["sig"]
        config.upstreams = [
            UpstreamConfig(name: "gh", hosts: [HostPattern("api.github.com")!], auth: AuthConfig(kind: .bearer(token: Secret(source: .env("GITHUB_TOKEN"), value: "ghp_leaky"))))
        ]
        return TraceRedactor.alwaysRedacting(config: config)
    }

    /// The general path alone, as `redactedTarget` was before the shortcut.
    static func general(_ redactor: TraceRedactor, _ target: String) -> String {
        redactor.url(prefix: "", target: target).map { part -> String in
            if case .literal(let literal) = part { return literal }
            return "REDACTED"
        }.joined()
    }

    @Test(arguments: [
        "/", "/users/42", "/p?", "/p?a=1&b=2", "/p?a=1#frag", "/p?flag&x=", "/p?&&", "/p?é=v&q=%20", "/p#f?token=x",
        "/ghp_leaky/x", "/p?a=ghp_leaky", "/p?token=1", "/p?Token=1&a=2", "/p?access%5Ftoken=1", "/p?SIG=abc#f",
        "/p?a=1#ghp_leaky", "/p?token", "/p?x=1=2&sig=", "/p?a=1&&sig=2", "/p?a&sig=1", "/p?sig=1&a=2", "/p?&sig=1#f",
    ])
    func theShortcutAgreesWithTheGeneralPath(_ target: String) {
        let redactor = Self.redactor
        let expected = Self.general(redactor, target)
        #expect(redactor.redactedTarget(target) == expected)
        if let shortcut = redactor.unchangedTarget(target) { #expect(shortcut == expected) }
    }

    @Test func theShortcutStepsAsideForRedactedParametersAndSecrets() {
        let redactor = Self.redactor
        #expect(redactor.unchangedTarget("/p?a=1&b=2") == "/p?a=1&b=2")
        #expect(redactor.unchangedTarget("/p?token") == "/p?token", "a name without a value is kept")
        #expect(redactor.unchangedTarget("/users/42") == "/users/42")
        #expect(redactor.unchangedTarget("/ghp_leaky") == "/[REDACTED:GITHUB_TOKEN]", "no query: scrubbed")
        #expect(redactor.unchangedTarget("/p?TOKEN=1") == nil)
        #expect(redactor.unchangedTarget("/p?a=1&sig=2") == nil)
        #expect(redactor.unchangedTarget("/p?a=ghp_leaky") == nil)
        #expect(redactor.redactedTarget("/p?a=1&sig=2#f") == "/p?a=1&sig=REDACTED#f")
    }
}
