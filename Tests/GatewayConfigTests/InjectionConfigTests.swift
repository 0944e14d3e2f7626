import Foundation
import GatewayConfig
import Testing

/// `faults`, `mocks` and `replay` of an upstream: decoding, and errors that name the key.
@Suite struct InjectionConfigTests {
    @Test func faultsMocksAndReplayDecode() throws {
        let har = try TestSupport.temporaryFile(named: "y.har", contents: #"{"log":{"version":"1.2","entries":[]}}"#)
        defer { TestSupport.removeDirectory(of: har) }
        let config = TestSupport.parse("""
            upstreams:
              - name: api
                hosts: [api.example.com]
                faults:
                  seed: 42
                  rules:
                    - endpoint: GET /orders
                      every: 3
                      error: {status: 429, retry_after: 2s}
                    - endpoint: /slow
                      rate: 0.5
                      latency: {min: 1s, max: 3s}
                    - toward: policies
                      error: 503
                    - rate: 0
                      reset: true
                mocks:
                  unmatched: block
                  rules:
                    - endpoint: GET /users/{id}
                      query: {expand: "*"}
                      nth: 2
                      response: {status: 200, body: '{"id":"{{path.id}}"}', template: true, headers: {X-A: b}}
                replay:
                  har: \(har.path)
                  match: [method, path]
                  unmatched: pass
                  timing: recorded
            """)
        let upstream = try #require(config?.upstreams.first)
        let faults = try #require(upstream.faults)
        #expect(faults.seed == 42 && faults.enabled)
        #expect(faults.rules.count == 4)
        #expect(faults.rules[0].every == 3 && faults.rules[0].action == .error(FaultResponse(status: 429, retryAfter: .seconds(2))))
        #expect(faults.rules[1].action == .latency(min: .seconds(1), max: .seconds(3)) && faults.rules[1].rate == 0.5)
        #expect(faults.rules[2].toward == .policies && faults.rules[2].endpoint == nil)
        #expect(faults.rules[3].action == .reset && faults.rules[3].rate == 0)
        let mocks = try #require(upstream.mocks)
        #expect(mocks.unmatched == .block)
        #expect(mocks.rules[0].nth == 2 && mocks.rules[0].response.template && mocks.rules[0].query == [MockHeader("expand", "*")])
        let replay = try #require(upstream.replay)
        #expect(replay.match == [.method, .path] && replay.recordedTiming && replay.har == har.path)
    }

    @Test func errorsNameTheKey() {
        let head = "upstreams:\n  - name: api\n    hosts: [a.example]\n"
        TestSupport.expectError(head + "    faults:\n      rules:\n        - rate: 1.5\n          reset: true\n",
            keyPath: "upstreams[0].faults.rules[0].rate", contains: "from 0 to 1")
        TestSupport.expectError(head + "    faults:\n      rules:\n        - error: 503\n          latency: 1s\n",
            keyPath: "upstreams[0].faults.rules[0]", contains: "does one thing")
        TestSupport.expectError(head + "    faults:\n      rules:\n        - endpoint: /x\n",
            keyPath: "upstreams[0].faults.rules[0]", contains: "one of: error, latency, reset")
        TestSupport.expectError(head + "    faults:\n      rules:\n        - error: 700\n",
            keyPath: "upstreams[0].faults.rules[0].error", contains: "from 100 to 599")
        TestSupport.expectError(head + "    faults:\n      rules:\n        - toward: server\n          reset: true\n",
            keyPath: "upstreams[0].faults.rules[0].toward", contains: "app, policies")
        TestSupport.expectError(head + "    mocks:\n      unmatched: drop\n",
            keyPath: "upstreams[0].mocks.unmatched", contains: "pass, block")
        TestSupport.expectError(head + "    mocks:\n      rules:\n        - endpoint: GET /x\n          nth: 0\n          response: {status: 200}\n",
            keyPath: "upstreams[0].mocks.rules[0].nth", contains: "from 1")
        TestSupport.expectError(head + "    replay:\n      har: /nonexistent/x.har\n",
            keyPath: "upstreams[0].replay.har", contains: "does not exist")
    }
}

extension InjectionConfigTests {
    /// `slow_body` and `reset: {after: SIZE}`: faults on the body, toward the app only.
    @Test func bodyFaultsDecodeAndActTowardTheAppOnly() throws {
        let head = "upstreams:\n  - name: api\n    hosts: [a.example]\n    faults:\n      rules:\n"
        let config = TestSupport.parse(head + """
                    - endpoint: /download
                      slow_body: {bytes_per_second: 2KiB}
                    - reset: {after: 4KiB}
            """)
        let rules = try #require(config?.upstreams.first?.faults?.rules)
        #expect(rules.map(\.action) == [.slowBody(bytesPerSecond: 2048), .resetMidBody(afterBytes: 4096)])
        #expect(rules.map(\.stage) == [.responseBody, .responseBody])
        #expect(rules.map(\.kind) == ["slow_body", "reset"])
        TestSupport.expectError(head + "        - toward: policies\n          slow_body: {bytes_per_second: 10}\n",
            keyPath: "upstreams[0].faults.rules[0].toward", contains: "toward the app only")
        TestSupport.expectError(head + "        - reset: {after: 0}\n",
            keyPath: "upstreams[0].faults.rules[0].reset.after", contains: "1 byte or more")
        TestSupport.expectError(head + "        - slow_body: {}\n",
            keyPath: "upstreams[0].faults.rules[0].slow_body", contains: "bytes_per_second")
    }
}
