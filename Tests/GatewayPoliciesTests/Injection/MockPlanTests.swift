import Foundation
import GatewayConfig
import GatewayCore
import GatewayPolicies
import NIOCore
import NIOHTTP1
import Testing
import GatewayTesting

/// Mock rules and replayed HAR entries, matched on request values (no sockets).
@Suite struct MockPlanTests {
    static func view(_ method: HTTPMethod, _ target: String, headers: HTTPHeaders = [:], body: String? = nil) -> MockRequestView {
        let request = ProxyRequest(
            method: method, scheme: .https, host: "api.example.com", port: 443, target: target, headers: RequestFields.lines(headers)
        )
        return MockRequestView(request, body: body.map { ByteBuffer(string: $0) })
    }

    static func view(_ target: String, headers: HTTPHeaders = [:], body: String? = nil) -> MockRequestView {
        view(.GET, target, headers: headers, body: body)
    }

    static func rule(_ endpoint: String, status: Int = 200, body: String = "ok", template: Bool = false) -> MockRule {
        MockRule(endpoint: EndpointTemplate(endpoint)!, response: MockResponse(status: status, body: .inline(body), template: template))
    }

    @Test func matchesMethodTemplateQueryHeaderAndBody() {
        var rule = Self.rule("POST /orders/{id}")
        rule.query = [MockHeader("status", "open")]
        rule.headers = [MockHeader("X-Tenant", "acme")]
        rule.bodyContains = ["\"sku\":\"A1\""]
        let matcher = MockMatcher(rule: rule)
        let good = Self.view(.POST, "/orders/7?status=open&x=1", headers: ["x-tenant": "ACME-eu"], body: #"{"sku":"A1"}"#)
        #expect(matcher.matches(good))
        #expect(!matcher.matches(Self.view(.GET, "/orders/7?status=open", headers: ["x-tenant": "acme"], body: #"{"sku":"A1"}"#)))
        #expect(!matcher.matches(Self.view(.POST, "/orders/7?status=closed", headers: ["x-tenant": "acme"], body: #"{"sku":"A1"}"#)))
        #expect(!matcher.matches(Self.view(.POST, "/orders/7?status=open", body: #"{"sku":"A1"}"#)))
        #expect(!matcher.matches(Self.view(.POST, "/orders/7?status=open", headers: ["x-tenant": "acme"], body: #"{"sku":"B2"}"#)))
        #expect(!matcher.matches(Self.view(.POST, "/orders/7/items?status=open", headers: ["x-tenant": "acme"], body: #"{"sku":"A1"}"#)))
        #expect(matcher.needsBody)
        #expect(matcher.parameters(of: "/orders/7") == ["id": "7"])
    }

    @Test func nthAnswersOnlyThatCallAndTheRestFallThrough() {
        var third = Self.rule("GET /orders", status: 500, body: "boom")
        third.nth = 3
        let plan = MockPlan(rules: [third, Self.rule("GET /orders", body: "[]")])
        let statuses = (1...5).map { _ in plan.answer(Self.view("/orders"))?.status.code }
        #expect(statuses == [200, 200, 500, 200, 200])
        #expect(plan.answer(Self.view("/users")) == nil)
        #expect(!plan.mayMatch(method: "GET", path: "/users"))
    }

    @Test func aTemplateEchoesPathQueryHeaderAndBodyFields() {
        let plan = MockPlan(rules: [Self.rule(
            "POST /users/{id}", status: 201,
            body: #"{"id":"{{path.id}}","q":"{{query.q}}","who":"{{header.X-User}}","name":"{{body.name}}","city":"{{body.address.city}}","m":"{{method}}","none":"{{query.missing}}"}"#,
            template: true
        )])
        let response = plan.answer(Self.view(.POST, "/users/42?q=a%20b", headers: ["X-User": "ann"], body: #"{"name":"Ann","address":{"city":"Oslo"}}"#))
        #expect(response?.status.code == 201)
        #expect(response.map { String(buffer: $0.body) } == #"{"id":"42","q":"a b","who":"ann","name":"Ann","city":"Oslo","m":"POST","none":""}"#)
        #expect(response?.headers["Content-Type"] == ["application/json"])
        #expect(response?.headers["X-Gateway-Injected"] == ["mock"])
    }

    @Test func replayServesMatchingEntriesInOrderThenTheLastAgain() throws {
        let har = """
            {"log":{"version":"1.2","creator":{"name":"WebInspector","version":"537.36"},"entries":[
              {"startedDateTime":"2026-01-01T00:00:00.000Z","time":12.5,
               "request":{"method":"GET","url":"https://api.example.com/orders?page=1","httpVersion":"h2","headers":[],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},
               "response":{"status":200,"statusText":"","httpVersion":"h2","headers":[{"name":":status","value":"200"},{"name":"content-type","value":"application/json"},{"name":"content-encoding","value":"gzip"}],"cookies":[],
                 "content":{"size":9,"mimeType":"application/json","text":"[\\"first\\"]"},"redirectURL":"","headersSize":-1,"bodySize":-1},"cache":{},"timings":{"send":0,"wait":12,"receive":0.5}},
              {"startedDateTime":"2026-01-01T00:00:01.000Z","time":3,
               "request":{"method":"GET","url":"https://api.example.com/orders?page=1","httpVersion":"h2","headers":[],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},
               "response":{"status":200,"statusText":"","httpVersion":"h2","headers":[],"cookies":[],
                 "content":{"size":10,"mimeType":"application/json","text":"WyJzZWNvbmQiXQ==","encoding":"base64"},"redirectURL":"","headersSize":-1,"bodySize":-1},"cache":{},"timings":{"send":0,"wait":3,"receive":0}},
              {"startedDateTime":"2026-01-01T00:00:02.000Z","time":3,
               "request":{"method":"POST","url":"https://api.example.com/orders","httpVersion":"h2","headers":[],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":7,"postData":{"mimeType":"text/plain","text":"sku=A1"}},
               "response":{"status":201,"statusText":"","httpVersion":"h2","headers":[],"cookies":[],"content":{"size":0,"mimeType":"text/plain","text":"made"},"redirectURL":"","headersSize":-1,"bodySize":-1},"cache":{},"timings":{"send":0,"wait":3,"receive":0}}
            ]}}
            """
        let file = URL(fileURLWithPath: TestScratch.path("replay", suffix: ".har"))
        try Data(har.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let table = try HARReplayTable(config: ReplayConfig(har: file.path, recordedTiming: true))
        let bodies = (0..<3).map { _ in table.answer(Self.view("/orders?page=1")).map { String(buffer: $0.body) } }
        #expect(bodies == [#"["first"]"#, #"["second"]"#, #"["second"]"#])
        #expect(table.answer(Self.view("/orders?page=2")) == nil, "the query is matched")
        let first = try HARReplayTable(config: ReplayConfig(har: file.path, recordedTiming: true)).answer(Self.view("/orders?page=1"))
        #expect(first?.headers["content-encoding"].isEmpty == true, "the recorded hop's coding is not replayed")
        #expect(first?.headers[":status"].isEmpty == true)
        #expect(first?.delay == .milliseconds(12))
        #expect(table.answer(Self.view(.POST, "/orders", body: "sku=B2"))?.status.code == 201, "body not in match: any body")

        let byBody = try HARReplayTable(config: ReplayConfig(har: file.path, match: [.method, .path, .body]))
        #expect(byBody.answer(Self.view(.POST, "/orders", body: "sku=B2")) == nil)
        #expect(byBody.answer(Self.view(.POST, "/orders", body: "sku=A1"))?.status.code == 201)
        #expect(byBody.answer(Self.view("/orders?page=9")) != nil, "query not in match")
    }
}
