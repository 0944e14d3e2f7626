import GatewayConfig

/// A configured `EndpointTemplate` prepared for the per-request match: literal
/// segments as bytes, compared against the request path's bytes (no Character
/// or Substring work on the hot path). Same semantics as `EndpointTemplate.matches`.
struct CompiledTemplate: Sendable {
    enum Segment: Sendable {
        case literal([UInt8])
        case parameter
    }

    /// Upper-case method, or nil for any.
    let method: String?
    let segments: [Segment]
    /// The `endpoint` label: `/users/{id}`.
    let path: String

    init(_ template: EndpointTemplate) {
        self.method = template.method
        self.segments = template.segments.map { segment in
            switch segment {
            case .literal(let text): .literal(Array(text.utf8))
            case .parameter: .parameter
            }
        }
        self.path = template.path
    }

    /// Whether `method` and `path` (without query) match.
    func matches(method: String, path: UnsafeBufferPointer<UInt8>) -> Bool {
        if let expected = self.method, expected != method { return false }
        guard path.first == UInt8(ascii: "/") else { return false }
        var position = 1
        if segments.isEmpty { return path.count == 1 }
        for (index, segment) in segments.enumerated() {
            var end = position
            while end < path.count, path[end] != UInt8(ascii: "/") { end += 1 }
            let component = UnsafeBufferPointer(rebasing: path[position..<end])
            switch segment {
            case .literal(let bytes): guard component.elementsEqual(bytes) else { return false }
            case .parameter: guard !component.isEmpty else { return false }
            }
            if index == segments.count - 1 { return end == path.count }
            guard end < path.count else { return false }
            position = end + 1
        }
        return false
    }
}
