import Foundation
import GatewayConfig
import GatewayCore
import Testing

/// Every new secret kind stays out of `redactedYAML()`, `ConfigError`s,
/// warnings and `dump`; the rest round-trips.
@Suite("redaction of auth secrets and the new sections")
struct FeatureRedactionTests {
    static let environment = [
        "BEARER_TOKEN": "SECRET-bearer-env",
        "QUERY_KEY": "SECRET-query-env",
        "OAUTH_CLIENT_ID": "SECRET-client-id-env",
        "OAUTH_CLIENT_SECRET": "SECRET-client-secret-env",
        "OAUTH_REFRESH": "SECRET-refresh-env",
    ]
    static let fileSecrets = [
        "header-value": "SECRET-header-file",
        "client-secret": "SECRET-client-secret-file",
        "client-id": "SECRET-client-id-file",
        "refresh": "SECRET-refresh-file",
        "basic": "SECRET-basic-file",
    ]

    static func yaml(directory: URL) -> String {
        func file(_ name: String) -> String { directory.appendingPathComponent(name).path }
        return """
            state_dir: /var/lib/gw
            trace:
              max_file_size: 1MiB
              redact_headers: [X-Custom-Token]
              redact_query: [sig]
              redact_json_fields: [pin]
              buffer: 8
            metrics:
              max_endpoints_per_upstream: 20
              stats_window: 90s
            interception:
              ca_key: /secure/ca-key.pem
              leaf_cache_size: 7
            upstreams:
              - name: bearer-env
                hosts: [a.test]
                endpoints: ["GET /users/{id}", /health]
                intercept: true
                auth: { type: bearer, token_env: BEARER_TOKEN }
                retry:
                  attempts: 4
                  backoff: { base: 20ms, max: 1s }
                  on: [reset, 503]
                  budget: { percent: 12.5, min_per_second: 0.25 }
                  buffer_limit: 64KiB
                  per_try_timeout: 2s
                  deadline: 9s
                  retry_non_idempotent: true
                rate_limit:
                  requests_per_second: 2.5
                  max_queue: 3
                  max_wait: 1500ms
                  honor_upstream: false
                  per_endpoint: true
              - name: bearer-inline
                hosts: [b.test]
                auth: { type: bearer, token: SECRET-bearer-inline, client_auth: keep }
                retry: {}
                rate_limit: {}
              - name: header-file
                hosts: [c.test]
                auth: { type: header, name: X-API-Key, value_file: \(file("header-value")) }
              - name: header-inline
                hosts: [c2.test]
                auth: { type: header, name: X-Other, value: SECRET-header-inline }
              - name: basic-file
                hosts: [d.test]
                auth: { type: basic, username: svc, password_file: \(file("basic")) }
              - name: basic-inline
                hosts: [d2.test]
                auth: { type: basic, username: svc, password: SECRET-basic-inline }
              - name: query-env
                hosts: [e.test]
                auth: { type: query, param: api_key, value_env: QUERY_KEY }
              - name: query-inline
                hosts: [e2.test]
                auth: { type: query, param: key, value: SECRET-query-inline }
              - name: oauth-env
                hosts: [f.test]
                auth:
                  type: oauth2
                  grant: refresh_token
                  token_url: https://auth.test/oauth/token
                  client_id_env: OAUTH_CLIENT_ID
                  client_secret_env: OAUTH_CLIENT_SECRET
                  refresh_token_env: OAUTH_REFRESH
                  scope: "read write"
                  audience: https://api.test
                  client_auth_method: client_secret_post
                  refresh_before_expiry: 90s
              - name: oauth-file
                hosts: [g.test]
                auth:
                  type: oauth2
                  grant: refresh_token
                  token_url: https://auth.test/oauth/token
                  client_id_file: \(file("client-id"))
                  client_secret_file: \(file("client-secret"))
                  refresh_token_file: \(file("refresh"))
              - name: oauth-inline
                hosts: [h.test]
                auth:
                  type: oauth2
                  grant: refresh_token
                  token_url: https://auth.test/oauth/token
                  client_id: public-app
                  client_secret: SECRET-client-secret-inline
                  refresh_token: SECRET-refresh-inline
              - name: oauth-cc
                hosts: [i.test]
                auth:
                  type: oauth2
                  grant: client_credentials
                  token_url: "https://auth.test/token?tenant=SECRET-in-query"
                  client_id: svc
                  client_secret_env: OAUTH_CLIENT_SECRET
            """
    }

    static func withSecretFiles<T>(_ body: (URL) throws -> T) throws -> T {
        let first = try TestSupport.temporaryFile(named: "placeholder", contents: "")
        let directory = first.deletingLastPathComponent()
        defer { TestSupport.removeDirectory(of: first) }
        for (name, value) in fileSecrets {
            try Data((value + "\n").utf8).write(to: directory.appendingPathComponent(name))
        }
        return try body(directory)
    }

    @Test func noSecretValueInRedactedYAMLAndTheRestRoundTrips() throws {
        try Self.withSecretFiles { directory in
            let original = try ConfigLoader.parse(yaml: Self.yaml(directory: directory), file: "a.yaml", environment: Self.environment)
            let redacted = original.redactedYAML()
            #expect(!redacted.contains("SECRET-"), "\(redacted)")
            for name in Self.environment.keys { #expect(redacted.contains(name), "missing \(name)") }
            for name in Self.fileSecrets.keys { #expect(redacted.contains(directory.appendingPathComponent(name).path)) }
            for text in ["client_id: public-app", "token_url: \"https://auth.test/token?<redacted>\"", "type: query", "param: api_key"] {
                #expect(redacted.contains(text), "missing \(text)")
            }

            let reloaded = try ConfigLoader.parse(yaml: redacted, file: "b.yaml", environment: Self.environment)
            var expected = original
            let redactedSecret = Secret(source: .inline, value: "<redacted>")
            expected.upstreams[1].auth?.kind = .bearer(token: redactedSecret)
            expected.upstreams[3].auth?.kind = .header(name: "X-Other", value: redactedSecret)
            expected.upstreams[5].auth?.kind = .basic(username: "svc", password: redactedSecret)
            expected.upstreams[7].auth?.kind = .query(parameter: "key", value: redactedSecret)
            if case .oauth2(var oauth) = expected.upstreams[10].auth?.kind {
                oauth.clientSecret = redactedSecret
                oauth.refreshToken = redactedSecret
                expected.upstreams[10].auth?.kind = .oauth2(oauth)
            }
            if case .oauth2(var oauth) = expected.upstreams[11].auth?.kind {
                oauth.tokenURL = "https://auth.test/token?<redacted>"
                expected.upstreams[11].auth?.kind = .oauth2(oauth)
            }
            #expect(reloaded == expected)
        }
    }

    @Test func everyNewSectionIsInTheOutput() throws {
        let redacted = try Self.withSecretFiles { directory in
            try ConfigLoader.parse(yaml: Self.yaml(directory: directory), file: "a.yaml", environment: Self.environment).redactedYAML()
        }
        for text in [
            "trace:", "file: /var/lib/gw/trace.jsonl", "max_file_size: 1MiB", "redact_headers: [X-Custom-Token]",
            "metrics:", "stats_window: 90s", "interception:", "ca_cert: /var/lib/gw/ca.pem", "ca_key: /secure/ca-key.pem",
            "endpoints: [\"GET /users/{id}\", /health]", "intercept: true", "on: [reset, 503]", "percent: 12.5",
            "min_per_second: 0.25", "requests_per_second: 2.5", "burst: 3", "max_wait: 1500ms",
        ] {
            #expect(redacted.contains(text), "missing \(text)")
        }
    }

    @Test func errorsAfterSecretsAreResolvedNeverContainThem() throws {
        try Self.withSecretFiles { directory in
            // A late error (duplicate name) after every secret was read.
            let yaml = Self.yaml(directory: directory) + "\n  - name: oauth-cc\n    hosts: [z.test]\n"
            let error = TestSupport.error(of: yaml, environment: Self.environment)
            #expect(error?.keyPath == "upstreams[12].name")
            #expect(error?.description.contains("SECRET-") == false)
        }
    }

    @Test(arguments: [
        ("type: bearer\n      token: SECRET-x\n      name: n", "upstreams[0].auth.name"),
        ("type: bearer\n      token_env: BEARER_TOKEN\n      token: SECRET-x", "upstreams[0].auth"),
        ("type: header\n      name: \"bad name\"\n      value: SECRET-x", "upstreams[0].auth.name"),
        ("type: basic\n      username: \"a:b\"\n      password: SECRET-x", "upstreams[0].auth.username"),
        ("type: query\n      param: \"a b\"\n      value_env: QUERY_KEY", "upstreams[0].auth.param"),
        ("type: oauth2\n      grant: refresh_token\n      token_url: https://a.test/t\n      client_id_env: OAUTH_CLIENT_ID\n      client_secret: SECRET-x",
         "upstreams[0].auth"),
        ("type: oauth2\n      grant: client_credentials\n      token_url: \"https://u:SECRET-x@a.test/t\"\n      client_id: a\n      client_secret_env: OAUTH_CLIENT_SECRET",
         "upstreams[0].auth.token_url"),
        ("type: bearer\n      token: \"SECRET-x\\r\\nInjected: 1\"", "upstreams[0].auth.token"),
    ])
    func validationErrorsNeverContainSecrets(body: String, keyPath: String) {
        let yaml = "upstreams:\n  - name: a\n    hosts: [a.test]\n    auth:\n      \(body)\n"
        let error = TestSupport.error(of: yaml, environment: Self.environment)
        #expect(error?.keyPath == keyPath, "\(String(describing: error))")
        #expect(error?.description.contains("SECRET-") == false, "\(String(describing: error))")
    }

    @Test func dumpAndPrintNeverShowSecrets() throws {
        try Self.withSecretFiles { directory in
            let config = try ConfigLoader.parse(yaml: Self.yaml(directory: directory), file: "a.yaml", environment: Self.environment)
            var dumped = ""
            dump(config, to: &dumped)
            for text in [dumped, "\(config)", String(reflecting: config), config.warnings.joined(separator: "\n")] {
                // The one exception: a token URL's query is the user's own text, not a resolved secret.
                let withoutURL = text.replacingOccurrences(of: "tenant=SECRET-in-query", with: "")
                #expect(!withoutURL.contains("SECRET-"))
            }
        }
    }
}
