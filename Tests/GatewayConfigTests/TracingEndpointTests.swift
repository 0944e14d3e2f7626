import GatewayConfig
import Testing

/// Issue 54: `OTEL_EXPORTER_OTLP_ENDPOINT` read as a URL (the traces' path
/// added to its path, a query kept after it), the endpoint shown without its
/// query's values, and `OTEL_EXPORTER_OTLP_HEADERS` values percent-decoded.
@Suite("tracing endpoint and headers", .timeLimit(.minutes(1)))
struct TracingEndpointTests {
    static let on = ["OTEL_TRACES_EXPORTER": "otlp"]
    static let secret = "k3y-s3cr3t"

    static func tracing(_ environment: [String: String]) throws -> TracingConfig {
        try #require(TestSupport.parse("", environment: on.merging(environment) { $1 })).tracing
    }

    @Test(arguments: [
        ("http://otel:4318", "http://otel:4318/v1/traces"),
        ("http://otel:4318/", "http://otel:4318/v1/traces"),
        ("https://otel/otlp", "https://otel/otlp/v1/traces"),
        ("https://otel/otlp/", "https://otel/otlp/v1/traces"),
        ("http://otel:4318?tenant=a", "http://otel:4318/v1/traces?tenant=a"),
        ("http://otel:4318/?tenant=a&key=b", "http://otel:4318/v1/traces?tenant=a&key=b"),
        ("https://otel/otlp?api_key=k&x=%2F", "https://otel/otlp/v1/traces?api_key=k&x=%2F"),
        ("http://[::1]:4318/otlp?k=v", "http://[::1]:4318/otlp/v1/traces?k=v"),
        ("http://otel:4318/otlp#f", "http://otel:4318/otlp/v1/traces#f"),
    ])
    func theSignalPathGoesOnThePathAndTheQueryStaysAfterIt(_ base: String, _ expected: String) throws {
        #expect(TracingConfig.signalEndpoint(base: base) == expected)
        #expect(try Self.tracing(["OTEL_EXPORTER_OTLP_ENDPOINT": base]).endpoint == expected)
    }

    @Test func theTracesVariableIsStillUsedAsWritten() throws {
        let tracing = try Self.tracing(["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://otel:4318/custom?k=v"])
        #expect(tracing.endpoint == "http://otel:4318/custom?k=v")
    }

    @Test func theEndpointIsShownWithoutItsQueryValues() throws {
        let tracing = try Self.tracing(["OTEL_EXPORTER_OTLP_ENDPOINT": "https://otel.example/otlp?api_key=\(Self.secret)&tenant=acme"])
        #expect(tracing.endpoint == "https://otel.example/otlp/v1/traces?api_key=\(Self.secret)&tenant=acme", "sent as configured")
        #expect(tracing.shownEndpoint == "https://otel.example/otlp/v1/traces?api_key=&tenant=")

        // check-config's dump, from the variable and from the file alike.
        let dump = try #require(TestSupport.parse("", environment: Self.on.merging(["OTEL_EXPORTER_OTLP_ENDPOINT": "https://otel.example/otlp?api_key=\(Self.secret)"]) { $1 })).redactedYAML()
        #expect(!dump.contains(Self.secret), "\(dump)")
        #expect(dump.contains(#"endpoint: "https://otel.example/otlp/v1/traces?api_key="  # from OTEL_EXPORTER_OTLP_ENDPOINT; query values not shown"#)
            || dump.contains("endpoint: https://otel.example/otlp/v1/traces?api_key=  # from OTEL_EXPORTER_OTLP_ENDPOINT; query values not shown"), "\(dump)")
        let fileDump = try #require(TestSupport.parse("tracing:\n  endpoint: http://otel:4318/v1/traces?sig=\(Self.secret)\n")).redactedYAML()
        #expect(!fileDump.contains(Self.secret), "\(fileDump)")
        #expect(fileDump.contains("query values not shown"), "\(fileDump)")

        // A refused endpoint's error does not show them either.
        let error = TestSupport.error(of: "tracing:\n  endpoint: ftp://otel/v1/traces?key=\(Self.secret)\n")
        #expect(error?.description.contains("ftp://otel/v1/traces?key=") == true, "\(String(describing: error))")
        #expect(error?.description.contains(Self.secret) == false)
    }

    @Test func headerValuesArePercentDecoded() throws {
        let tracing = try Self.tracing(["OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20tok%2C1,x-tenant=a%3Db , x-plain=p"])
        #expect(tracing.headers.map(\.name) == ["authorization", "x-tenant", "x-plain"])
        #expect(tracing.headers.map(\.value.value) == ["Bearer tok,1", "a=b", "p"])
    }

    @Test func aValueThatIsNoPercentEncodingIsRefusedWithoutShowingIt() {
        let environment = Self.on.merging(["OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=\(Self.secret)%zz"]) { $1 }
        TestSupport.expectError("", keyPath: "tracing.headers", contains: "percent-encoded", environment: environment)
        #expect(TestSupport.error(of: "", environment: environment)?.description.contains(Self.secret) == false)
    }
}
