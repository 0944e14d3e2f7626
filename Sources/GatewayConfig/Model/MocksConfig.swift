/// `upstreams[i].mocks`: answers the gateway gives in the upstream's place. A
/// mocked request never reaches the network (the upstream's host need not
/// exist); requests no rule matches go on (`unmatched: pass`) or are refused
/// with 502 `X-Gateway-Error: not_mocked` (`block`).
public struct MocksConfig: Sendable, Equatable {
    public var enabled: Bool
    public var unmatched: UnmatchedMode
    public var rules: [MockRule]

    public init(enabled: Bool = true, unmatched: UnmatchedMode = .pass, rules: [MockRule] = []) {
        self.enabled = enabled
        self.unmatched = unmatched
        self.rules = rules
    }
}

/// What happens to a request no mock (or replayed entry) matches.
public enum UnmatchedMode: String, Sendable, Equatable {
    /// It goes to the upstream as usual.
    case pass
    /// 502 with `X-Gateway-Error: not_mocked`; nothing reaches the network.
    case block
}

/// A header name and value, in the order written.
public struct MockHeader: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// One `mocks.rules` entry: what it matches and what it answers.
public struct MockRule: Sendable, Equatable {
    /// `endpoint`: `[METHOD ]/path/{param}`; its parameters are the template's `{{path.NAME}}`.
    public var endpoint: EndpointTemplate
    /// `query`: each name must be present with this value (`*`: any value).
    public var query: [MockHeader]
    /// `headers`: each field must be present and contain this text (case-insensitive names).
    public var headers: [MockHeader]
    /// `body_contains`: each text must appear in the request body.
    public var bodyContains: [String]
    /// `nth`: only the n-th call that matches everything else (1-based); nil: every call.
    public var nth: Int?
    public var response: MockResponse

    public init(
        endpoint: EndpointTemplate, query: [MockHeader] = [], headers: [MockHeader] = [], bodyContains: [String] = [],
        nth: Int? = nil, response: MockResponse
    ) {
        self.endpoint = endpoint
        self.query = query
        self.headers = headers
        self.bodyContains = bodyContains
        self.nth = nth
        self.response = response
    }
}

/// A mock's response: status, headers and a body written inline, read from a
/// file, or rendered from a template (`{{path.id}}`, `{{query.NAME}}`,
/// `{{header.NAME}}`, `{{body.FIELD}}` of a JSON body, `{{method}}`).
public struct MockResponse: Sendable, Equatable {
    public var status: Int
    public var headers: [MockHeader]
    public var body: MockBody
    /// `template: true`: `{{...}}` in the body are filled from the request.
    public var template: Bool
    /// `delay`: the response waits this long (a scheduled task on the loop).
    public var delay: Duration?

    public init(status: Int = 200, headers: [MockHeader] = [], body: MockBody = .inline(""), template: Bool = false, delay: Duration? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.template = template
        self.delay = delay
    }
}

/// Where a mock's body comes from.
public enum MockBody: Sendable, Equatable {
    case inline(String)
    /// `file`: an absolute path (relative ones resolve against the config's directory), read when the config loads.
    case file(String)
}
