import GatewayConfig
import GatewayCore
import Testing

@Suite("upstreams[].endpoints")
struct EndpointTemplateTests {
    static func one(_ endpoints: String) -> String {
        "upstreams:\n  - name: api\n    hosts: [api.example.com]\n    endpoints: \(endpoints)\n"
    }

    @Test func parsesMethodAndSegments() throws {
        let template = try #require(EndpointTemplate("GET /users/{id}/orders"))
        #expect(template.method == "GET")
        #expect(template.segments == [.literal("users"), .parameter("id"), .literal("orders")])
        #expect(template.path == "/users/{id}/orders")
        #expect(template.description == "GET /users/{id}/orders")
    }

    @Test func methodIsOptionalAndUpperCased() throws {
        let any = try #require(EndpointTemplate("/health"))
        #expect(any.method == nil)
        #expect(any.description == "/health")
        #expect(EndpointTemplate("post /orders")?.method == "POST")
        #expect(EndpointTemplate("/")?.segments == [])
        #expect(EndpointTemplate("/")?.path == "/")
        #expect(EndpointTemplate("/users/")?.segments == [.literal("users"), .literal("")])
        #expect(EndpointTemplate("/users/")?.path == "/users/")
    }

    @Test(arguments: [
        ("GET /users/{id}", "GET", "/users/42", true),
        ("GET /users/{id}", "GET", "/users/42?expand=1", true),
        ("GET /users/{id}", "GET", "/users/42#frag", true),
        ("GET /users/{id}", "POST", "/users/42", false),
        ("GET /users/{id}", "get", "/users/42", false),
        ("GET /users/{id}", "GET", "/users/", false),
        ("GET /users/{id}", "GET", "/users", false),
        ("GET /users/{id}", "GET", "/users/42/", false),
        ("GET /users/{id}", "GET", "/users/42/orders", false),
        ("GET /users/{id}", "GET", "/Users/42", false),
        ("GET /users/{id}", "GET", "users/42", false),
        ("/health", "DELETE", "/health", true),
        ("/health", "GET", "/healthz", false),
        ("/", "GET", "/", true),
        ("/", "GET", "/?q=1", true),
        ("/", "GET", "/a", false),
        ("/users/", "GET", "/users/", true),
        ("/users/", "GET", "/users", false),
        ("/a/{x}/b/{y}", "PUT", "/a/1/b/2", true),
        ("/a/{x}/b/{y}", "PUT", "/a/1/c/2", false),
        ("/a/{x}/b/{y}", "PUT", "/a//b/2", false),
    ])
    func matches(template: String, method: String, path: String, expected: Bool) throws {
        let parsed = try #require(EndpointTemplate(template))
        #expect(parsed.matches(method: method, path: path[...]) == expected)
    }

    @Test func matchesASubstringOfALargerTarget() throws {
        let target = "http://api.example.com/users/7?x=1"
        let path = target[target.range(of: "/users")!.lowerBound...]
        #expect(try #require(EndpointTemplate("GET /users/{id}")).matches(method: "GET", path: path))
    }

    @Test func decodesFromYAMLAndUpstreamFindsTheFirstMatch() {
        let upstream = TestSupport.parse(Self.one("[\"GET /users/me\", \"GET /users/{id}\", /health]"))?.upstreams.first
        #expect(upstream?.endpoints.map(\.description) == ["GET /users/me", "GET /users/{id}", "/health"])
        #expect(upstream?.endpoint(method: "GET", path: "/users/me")?.description == "GET /users/me")
        #expect(upstream?.endpoint(method: "GET", path: "/users/9")?.description == "GET /users/{id}")
        #expect(upstream?.endpoint(method: "GET", path: "/other") == nil)
    }

    @Test func defaultsToNone() {
        #expect(TestSupport.parse(Self.one("[]"))?.upstreams.first?.endpoints == [])
        #expect(TestSupport.parse(Self.one("~"))?.upstreams.first?.endpoints == [])
    }

    @Test(arguments: [
        ("users/{id}", "must start with '/'"),
        ("GET users", "must start with '/'"),
        ("GET /a b", "expected '[METHOD ]/path'"),
        ("G@T /a", "not an HTTP method"),
        ("/a//b", "empty path segment"),
        ("/users/{}", "must be {name}"),
        ("/users/{user-id}", "must be {name}"),
        ("/users/{id}/x/{id}", "appears twice"),
        ("/users/id-{id}", "whole segment"),
        ("/users/{id", "whole segment"),
        ("/search?q=1", "no query"),
        ("", "expected '[METHOD ]/path'"),
    ])
    func rejectsMalformedTemplates(text: String, fragment: String) {
        #expect(EndpointTemplate(text) == nil)
        TestSupport.expectError(Self.one("[\"/ok\", \"\(text)\"]"), keyPath: "upstreams[0].endpoints[1]", contains: fragment)
    }

    @Test func errorsNameTheTemplate() {
        TestSupport.expectError(
            Self.one("[\"/users/{id\"]"), keyPath: "upstreams[0].endpoints[0]",
            contains: "not an endpoint template: a parameter must be a whole segment, like /users/{id}; got '/users/{id'")
    }

    @Test func wrongShapes() {
        TestSupport.expectError(Self.one("/health"), keyPath: "upstreams[0].endpoints", contains: "expected a list of endpoint templates")
        TestSupport.expectError(Self.one("[{a: b}]"), keyPath: "upstreams[0].endpoints[0]", contains: "expected a string")
    }

    @Test func duplicatesAreErrors() {
        TestSupport.expectError(
            Self.one("[\"GET /a/{id}\", /b, \"get /a/{id}\"]"), keyPath: "upstreams[0].endpoints[2]",
            contains: "duplicate endpoint 'GET /a/{id}' (also endpoints[0])")
    }

    @Test func countIsBoundedByTheMetricsLimit() {
        let yaml = "metrics:\n  max_endpoints_per_upstream: 2\n" + Self.one("[/a, /b, /c]")
        TestSupport.expectError(
            yaml, keyPath: "upstreams[0].endpoints", contains: "lists 3 templates, more than metrics.max_endpoints_per_upstream (2)")
        #expect(TestSupport.parse("metrics:\n  max_endpoints_per_upstream: 3\n" + Self.one("[/a, /b, /c]")) != nil)
    }

    @Test func templatesBuiltInCodeAreValidated() {
        var config = GatewayConfig()
        config.upstreams = [
            UpstreamConfig(
                name: "a", hosts: [HostPattern("a.com")!],
                endpoints: [EndpointTemplate(method: "GET", segments: [.literal("a/b")])])
        ]
        let error = #expect(throws: ConfigError.self) { try config.validate() }
        #expect(error?.keyPath == "upstreams[0].endpoints[0]")
    }

    @Test func interceptDecodes() {
        let yaml = "upstreams:\n  - name: api\n    hosts: [api.example.com]\n    intercept: true\n"
        #expect(TestSupport.parse(yaml)?.upstreams.first?.intercept == true)
        #expect(TestSupport.parse(Self.one("[]"))?.upstreams.first?.intercept == false)
        TestSupport.expectError(
            "upstreams:\n  - name: api\n    hosts: [a.com]\n    intercept: maybe\n", keyPath: "upstreams[0].intercept",
            contains: "expected true or false, got 'maybe'")
    }
}
