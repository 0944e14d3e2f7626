public import NIOHTTP1

extension HopByHopHeaders {
    /// ``removeAll(from:)`` for a request's fields: hop-by-hop fields and those
    /// `Connection` names are marked dropped, by their names' bytes.
    public static func removeAll(from fields: inout RequestFields) {
        var hasHopByHop = false
        var named: [String] = []
        fields.forEachField { name, value, _ in
            guard isAlwaysHopByHop(name, from: 0, to: name.count) else { return }
            hasHopByHop = true
            guard HTTP1HeadLines.equalsIgnoringCase(name, from: 0, to: name.count, "connection") else { return }
            let text = String(decoding: value, as: UTF8.self)
            forEachToken(in: text) { token in
                if !equalsIgnoringCase("keep-alive", token), !equalsIgnoringCase("close", token) { named.append(String(token)) }
            }
        }
        guard hasHopByHop else { return }
        fields.removeAll { name in
            isAlwaysHopByHop(name, from: 0, to: name.count)
                || named.contains { RequestFields.equalsIgnoringCase(name, $0) }
        }
    }

    /// ``addVia(to:version:pseudonym:)`` for a request's fields.
    public static func addVia(to fields: inout RequestFields, version: HTTPVersion, pseudonym: String) {
        fields.add(name: "Via", value: version == .http1_1 ? "1.1 \(pseudonym)" : "\(version.major).\(version.minor) \(pseudonym)")
    }
}
