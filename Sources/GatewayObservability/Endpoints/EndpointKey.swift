public import NIOHTTP1

/// One endpoint's identity, and so its metric labels: upstream (config name,
/// or the host for an unconfigured one) + method + path template.
public struct EndpointKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var upstream: String
    public var method: String
    /// `/users/{id}`, or `other` once the upstream's endpoint budget is spent.
    public var endpoint: String

    public static let overflow = "other"

    public init(upstream: String, method: String, endpoint: String) {
        self.upstream = upstream
        self.method = method
        self.endpoint = endpoint
    }

    /// `api GET /users/{id}`.
    public var description: String { "\(upstream) \(method) \(endpoint)" }

    public static func < (a: EndpointKey, b: EndpointKey) -> Bool {
        (a.upstream, a.endpoint, a.method) < (b.upstream, b.endpoint, b.method)
    }

    /// The method as a bounded label: the standard methods by name, any other
    /// (extension methods are unbounded text) as `OTHER`.
    public static func methodLabel(_ method: HTTPMethod) -> String {
        switch method {
        case .GET: "GET"
        case .HEAD: "HEAD"
        case .POST: "POST"
        case .PUT: "PUT"
        case .DELETE: "DELETE"
        case .PATCH: "PATCH"
        case .OPTIONS: "OPTIONS"
        case .CONNECT: "CONNECT"
        case .TRACE: "TRACE"
        default: "OTHER"
        }
    }
}

/// The `status_class` label: what the client saw, or `error` when the gateway
/// answered with an error of its own (a `GatewayError`: connect failed, timeout...).
public enum StatusClass: Int, Sendable, CaseIterable {
    case informational, success, redirection, clientError, serverError, error

    public init(status: Int) {
        switch status {
        case 100..<200: self = .informational
        case 200..<300: self = .success
        case 300..<400: self = .redirection
        case 400..<500: self = .clientError
        case 500..<600: self = .serverError
        default: self = .error
        }
    }

    public var label: String {
        switch self {
        case .informational: "1xx"
        case .success: "2xx"
        case .redirection: "3xx"
        case .clientError: "4xx"
        case .serverError: "5xx"
        case .error: "error"
        }
    }

    /// Counted in the error rate: server errors and gateway errors.
    public var isFailure: Bool { self == .serverError || self == .error }
}
