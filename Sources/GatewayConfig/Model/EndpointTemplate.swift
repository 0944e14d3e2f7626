/// One `upstreams[i].endpoints` entry: an optional method and a path template,
/// `GET /users/{id}`, `POST /orders`, `/health`. Used to name endpoints in
/// metrics and traces; configured templates win over automatic normalization.
public struct EndpointTemplate: Sendable, Equatable, CustomStringConvertible {
    /// Upper-case method (`GET`), or nil for any method.
    public var method: String?
    /// The path's segments between slashes; `/` has none. A trailing slash is
    /// an empty literal last segment (`/users/` is `[users, ""]`).
    public var segments: [Segment]

    public enum Segment: Sendable, Equatable {
        /// Matches exactly this text (case-sensitive, as sent).
        case literal(String)
        /// `{name}`: matches any one non-empty segment.
        case parameter(String)
    }

    public init(method: String? = nil, segments: [Segment]) {
        self.method = method
        self.segments = segments
    }

    /// Parses `[METHOD ]/path/{param}`; nil when malformed.
    public init?(_ text: String) {
        guard case .success(let template) = EndpointTemplate.parse(text) else { return nil }
        self = template
    }

    /// `/users/{id}`.
    public var path: String {
        "/" + segments.map { segment in
            switch segment {
            case .literal(let text): text
            case .parameter(let name): "{\(name)}"
            }
        }.joined(separator: "/")
    }

    /// `GET /users/{id}`, or just the path when any method matches.
    public var description: String {
        method.map { "\($0) \(path)" } ?? path
    }

    /// True when `method` (compared exactly; methods are case-sensitive) and
    /// the origin-form `path` match. A query (`?...`) or fragment is ignored.
    /// Allocation-free: called for every request.
    public func matches(method: String, path: Substring) -> Bool {
        if let expected = self.method, expected != method { return false }
        var path = path
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        guard path.first == "/" else { return false }
        var remaining = path.dropFirst()
        if segments.isEmpty { return remaining.isEmpty }
        for (index, segment) in segments.enumerated() {
            let end = remaining.firstIndex(of: "/") ?? remaining.endIndex
            let component = remaining[..<end]
            switch segment {
            case .literal(let text): guard component == text else { return false }
            case .parameter: guard !component.isEmpty else { return false }
            }
            if index == segments.count - 1 { return end == remaining.endIndex }
            guard end != remaining.endIndex else { return false }
            remaining = remaining[remaining.index(after: end)...]
        }
        return false
    }

    /// The parse with a reason for failure, for config errors.
    static func parse(_ text: String) -> Result<EndpointTemplate, Problem> {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 1 || parts.count == 2 else {
            return .failure(Problem(message: "expected '[METHOD ]/path', e.g. 'GET /users/{id}' or '/health'"))
        }
        var method: String?
        if parts.count == 2 {
            guard parts[0].unicodeScalars.allSatisfy(EndpointTemplate.isTokenCharacter) else {
                return .failure(Problem(message: "'\(parts[0])' is not an HTTP method"))
            }
            method = parts[0].uppercased()
        }
        let path = parts[parts.count - 1]
        guard path.hasPrefix("/") else { return .failure(Problem(message: "the path must start with '/'")) }
        if path == "/" { return .success(EndpointTemplate(method: method, segments: [])) }
        let pieces = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        var segments: [Segment] = []
        var names: Set<String> = []
        for (index, piece) in pieces.enumerated() {
            if piece.isEmpty && index < pieces.count - 1 { return .failure(Problem(message: "empty path segment ('//')")) }
            if piece.hasPrefix("{") && piece.hasSuffix("}") && piece.count >= 2 {
                let name = String(piece.dropFirst().dropLast())
                guard !name.isEmpty, name.unicodeScalars.allSatisfy(EndpointTemplate.isNameCharacter) else {
                    return .failure(Problem(message: "parameter '\(piece)' must be {name} with letters, digits and '_'"))
                }
                guard names.insert(name).inserted else { return .failure(Problem(message: "parameter {\(name)} appears twice")) }
                segments.append(.parameter(name))
            } else {
                if piece.contains(where: { $0 == "{" || $0 == "}" }) {
                    return .failure(Problem(message: "a parameter must be a whole segment, like /users/{id}"))
                }
                if piece.contains(where: { $0 == "?" || $0 == "#" || $0.isWhitespace || ($0.asciiValue ?? 32) < 32 }) {
                    return .failure(Problem(message: "a path template has no query, fragment, spaces or control characters"))
                }
                segments.append(.literal(String(piece)))
            }
        }
        return .success(EndpointTemplate(method: method, segments: segments))
    }

    /// Why a template does not parse.
    struct Problem: Error, Equatable {
        var message: String
    }

    /// RFC 9110 `tchar`.
    static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9",
            "!", "#", "$", "%", "&", "'", "*", "+", "-", ".", "^", "_", "`", "|", "~":
            true
        default: false
        }
    }

    private static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "_": true
        default: false
        }
    }
}
