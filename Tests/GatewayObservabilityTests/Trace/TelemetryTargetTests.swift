import GatewayConfig
import GatewayCore
@testable import GatewayObservability
import Testing

/// ``TraceRedactor/redactedTarget(_:)``: what the spans' `url.query` and
/// `url.full` are made of. Every query value goes, whatever its name (as the
/// exchange's log line drops them: one function for both), names stay, and
/// the gateway's secrets are scrubbed from the rest.
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

    /// The query: the names the trace file redacts and those it does not alike.
    @Test func everyQueryValueIsDroppedAndEveryNameKept() {
        let target = "/p?access_token=at1&api_key=ak2&sig=s3&password=pw4&refresh_token=rt5&id_token=it6&key=k7"
            + "&X-Amz-Signature=as8&X-Amz-Credential=ac9&page=2"
        let redacted = Self.redactor.redactedTarget(target)
        #expect(redacted == "/p?access_token=&api_key=&sig=&password=&refresh_token=&id_token=&key=&X-Amz-Signature=&X-Amz-Credential=&page=")
        for value in ["at1", "ak2", "s3", "pw4", "rt5", "it6", "k7", "as8", "ac9"] { #expect(!redacted.contains(value)) }
    }

    /// The same text the log line writes for the same target (``LoggedText/withoutQueryValues(_:)``).
    @Test(arguments: [
        "/", "/users/42", "/p?", "/p?a=1&b=2", "/p?a=1#frag", "/p?flag&x=", "/p?&&", "/p?é=v&q=%20", "/p?token=1", "/p?x=1=2&sig=",
        "/p?a&sig=1", "/p?sig=1&a=2",
    ])
    func theSpanShowsWhatTheLogLineShows(_ target: String) {
        #expect(Self.redactor.redactedTarget(target) == LoggedText.withoutQueryValues(target))
    }

    @Test func secretsLeftInThePathOrANameAreScrubbed() {
        let redactor = Self.redactor
        #expect(redactor.redactedTarget("/ghp_leaky/x") == "/[REDACTED:GITHUB_TOKEN]/x")
        #expect(redactor.redactedTarget("/p?a=ghp_leaky&ghp_leaky") == "/p?a=&[REDACTED:GITHUB_TOKEN]")
        #expect(redactor.redactedTarget("/users/42") == "/users/42")
    }
}
