public import GatewayConfig
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// An upstream's mock rules, in order, with their `nth` counts: the first rule
/// whose every condition holds answers (a rule with `nth` only on that call;
/// the calls before and after fall through to the rules below it). Bodies
/// from files are read when the config loads.
public final class MockPlan: Sendable {
    let matchers: [MockMatcher]
    /// Each rule's body from its file, read once.
    let fileBodies: [String?]
    private let calls: Mutex<[Int]>

    public init(rules: [MockRule]) {
        matchers = rules.map(MockMatcher.init)
        fileBodies = rules.map { rule in
            guard case .file(let path) = rule.response.body, let data = FileManager.default.contents(atPath: path) else { return nil }
            return String(decoding: data, as: UTF8.self)
        }
        calls = Mutex(Array(repeating: 0, count: rules.count))
    }

    /// Whether a rule that may match this request's head needs its body first.
    public func needsBody(method: String, path: Substring) -> Bool {
        matchers.contains { $0.needsBody && $0.matchesHead(method: method, path: path) }
    }

    /// Whether any rule may match this method and path (else the request passes at once).
    public func mayMatch(method: String, path: Substring) -> Bool {
        matchers.contains { $0.matchesHead(method: method, path: path) }
    }

    /// The answer of the first rule that matches, counting `nth` calls.
    public func answer(_ request: MockRequestView) -> InjectedResponse? {
        for (index, matcher) in matchers.enumerated() where matcher.matches(request) {
            if let nth = matcher.rule.nth {
                let call = calls.withLock { counts in
                    counts[index] += 1
                    return counts[index]
                }
                guard call == nth else { continue }
            }
            return response(of: index, request: request)
        }
        return nil
    }

    func response(of index: Int, request: MockRequestView) -> InjectedResponse {
        let matcher = matchers[index]
        let spec = matcher.rule.response
        var text: String
        switch spec.body {
        case .inline(let inline): text = inline
        case .file: text = fileBodies[index] ?? ""
        }
        if spec.template {
            text = MockTemplate.render(text, request: request, parameters: matcher.parameters(of: request.path))
        }
        var headers = HTTPHeaders()
        for header in spec.headers { headers.add(name: header.name, value: header.value) }
        if !headers.contains(name: "Content-Type"), !text.isEmpty {
            let trimmed = text.drop { $0.isWhitespace }
            headers.add(name: "Content-Type", value: trimmed.first == "{" || trimmed.first == "[" ? "application/json" : "text/plain; charset=utf-8")
        }
        return InjectedResponse(status: spec.status, headers: headers, body: ByteBuffer(string: text), mark: .mock, delay: spec.delay)
    }
}
