public import NIOHTTP1

/// Hop-by-hop header handling (RFC 9110 §7.6.1): what a proxy must not forward.
public enum HopByHopHeaders {
    /// Always hop-by-hop, whatever `Connection` says.
    public static let names: Set<String> = [
        "connection", "proxy-connection", "keep-alive", "te", "trailer",
        "transfer-encoding", "upgrade", "proxy-authorization", "proxy-authenticate",
    ]

    /// Removes hop-by-hop headers and those named in `Connection`, keeping the
    /// order and duplicates of every end-to-end header.
    public static func removeAll(from headers: inout HTTPHeaders) {
        var named: Set<String> = []
        for value in headers[canonicalForm: "connection"] {
            named.insert(value.lowercased())
        }
        var needsRemoval = false
        for (name, _) in headers {
            let lower = name.lowercased()
            if names.contains(lower) || named.contains(lower) {
                needsRemoval = true
                break
            }
        }
        guard needsRemoval else { return }
        var kept = HTTPHeaders()
        kept.reserveCapacity(headers.count)
        for (name, value) in headers {
            let lower = name.lowercased()
            if names.contains(lower) || named.contains(lower) { continue }
            kept.add(name: name, value: value)
        }
        headers = kept
    }

    /// Appends this gateway to `Via` (RFC 9110 §7.6.3), e.g. `1.1 gateway`.
    public static func addVia(to headers: inout HTTPHeaders, version: HTTPVersion, pseudonym: String) {
        headers.add(name: "Via", value: "\(version.major).\(version.minor) \(pseudonym)")
    }
}
