public import NIOHTTP1

extension HopByHopHeaders {
    /// ``removeAll(from:)`` for a request's fields: hop-by-hop fields and those
    /// `Connection` names are marked dropped, by their names' bytes.
    public static func removeAll(from fields: inout RequestFields) {
        // One pass over the names when there is none (the upstream head's defensive call).
        guard fields.containsName(where: { isAlwaysHopByHop($0, from: 0, to: $0.count) }) else { return }
        let named = fields.namesInConnection()
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
