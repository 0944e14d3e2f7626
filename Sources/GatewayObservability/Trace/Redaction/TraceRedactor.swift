import Foundation
public import GatewayCore
public import GatewayConfig
public import NIOHTTP1

/// Replaces secrets in what a trace shows: configured and built-in header
/// names (and those of upstreams' `auth`), query parameters and body fields
/// (JSON, NDJSON, forms, multipart parts) become shell variables
/// (`${REDACTED_AUTHORIZATION}`) or placeholders, and any secret value the
/// gateway holds that still shows up anywhere is scrubbed as a last line of
/// defence: configured ones in every encoding the gateway sends them
/// (``scrubList(config:)``), and those obtained at run time
/// (``adding(runtimeSecrets:)``, OAuth2 tokens).
public struct TraceRedactor: Sendable {
    public let enabled: Bool
    let headerNames: Set<String>
    /// `headerNames` as a list, matched without lowercasing each name (no allocation per header).
    private let headerNameList: [String]
    let queryNames: Set<String>
    let fieldNames: Set<String>
    /// What form and multipart bodies redact: `fieldNames` and `queryNames`.
    let formFieldNames: Set<String>
    /// Secret values (longest first) and what replaces them.
    var secretValues: [(value: String, placeholder: String)]

    public static let bodyPlaceholder = "[REDACTED]"

    public init(config: GatewayConfig) {
        let trace = config.trace
        enabled = trace.redact
        // Built-in names, `trace.redact_*`, and every upstream's auth header and
        // query parameter (a client's own value there is as secret as ours).
        headerNames = config.redactedHeaderNames
        headerNameList = headerNames.map { $0.lowercased() }.sorted()
        queryNames = config.redactedQueryParameters
        fieldNames = config.redactedJSONFields
        formFieldNames = fieldNames.union(queryNames)
        secretValues = Self.scrubList(config: config)
    }

    /// The shell variable a `--direct` curl line reads `secret` from: its env
    /// var name, else `<UPSTREAM>_<KEY>`.
    public static func variableName(for secret: Secret, upstream: String, key: String) -> String {
        if case .env(let name) = secret.source { return ShellQuoting.sanitizedVariableName(name) }
        return ShellQuoting.sanitizedVariableName("\(upstream)_\(key)".uppercased())
    }

    /// The shell variable a redacted header or query parameter's value is shown as (before sanitizing).
    static func redactedVariable(_ name: String) -> String {
        "REDACTED_" + name.uppercased()
    }

    public func isRedactedHeader(_ name: String) -> Bool {
        enabled && headerNameList.contains { HopByHopHeaders.equalsIgnoringCase(name, $0) }
    }

    /// The headers in order, redacted ones as `${REDACTED_<NAME>}`.
    /// - Parameters:
    ///   - dropped: the index of a header left out (the gateway's own `Via`).
    ///   - host: the value shown for `Host` instead of the one in `headers`.
    public func headers(_ headers: HTTPHeaders, dropping dropped: Int? = nil, host: String? = nil) -> [CurlCommand.Header] {
        self.headers(fields: headers, count: headers.count, dropping: dropped, host: host)
    }

    /// ``headers(_:dropping:host:)`` for a request's fields.
    public func headers(_ fields: RequestFields, dropping dropped: Int? = nil, host: String? = nil) -> [CurlCommand.Header] {
        self.headers(fields: fields, count: fields.count, dropping: dropped, host: host)
    }

    private func headers(
        fields headers: some Sequence<(name: String, value: String)>, count: Int, dropping dropped: Int?, host: String?
    ) -> [CurlCommand.Header] {
        var result: [CurlCommand.Header] = []
        // Room for the credential a direct line adds.
        result.reserveCapacity(count + 1)
        for (index, (name, value)) in headers.enumerated() where index != dropped {
            if isRedactedHeader(name) {
                result.append(CurlCommand.Header(name: name, value: [.variable(Self.redactedVariable(name))]))
            } else if let host, HopByHopHeaders.equalsIgnoringCase(name, "host") {
                result.append(CurlCommand.Header(name: name, value: scrub(host)))
            } else {
                result.append(CurlCommand.Header(name: name, value: scrub(value)))
            }
        }
        return result
    }

    /// `prefix` + `target` with redacted query parameter values as `${REDACTED_<NAME>}`.
    /// Everything else is kept byte for byte. Split by bytes (`?`, `#`, `&`, `=`
    /// are ASCII, so every cut is on a character boundary).
    public func url(prefix: String, target: String) -> [ShellQuoting.Part] {
        let bytes = target.utf8
        // Two literals, one quoted word: no string made for the whole URL.
        guard enabled, let q = bytes.firstIndex(of: UInt8(ascii: "?")) else { return [.literal(prefix), .literal(scrub(target))] }
        var parts: [ShellQuoting.Part] = [.literal(prefix + String(target[...q]))]
        var rest = target[bytes.index(after: q)...]
        var fragment = ""
        if let hash = rest.utf8.firstIndex(of: UInt8(ascii: "#")) {
            fragment = String(rest[hash...])
            rest = rest[..<hash]
        }
        var first = true
        for pairBytes in rest.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
            if !first { parts.append(.literal("&")) }
            first = false
            let pair = Substring(pairBytes)
            let equals = pairBytes.firstIndex(of: UInt8(ascii: "="))
            let name = String(pair[..<(equals ?? pair.endIndex)])
            let decoded = Self.decodedQueryName(name)
            if equals != nil, queryNames.contains(decoded) {
                parts.append(.literal(name + "="))
                parts.append(.variable(Self.redactedVariable(decoded)))
            } else {
                parts.append(.literal(scrub(String(pair))))
            }
        }
        if !fragment.isEmpty { parts.append(.literal(scrub(fragment))) }
        return merged(parts)
    }

    /// A query parameter's name as the redaction lists hold it: `+` read as a
    /// space, percent-decoded, lowercased. Plain ASCII names (nearly all) are
    /// kept as they are or lowercased (``HTTPFieldBytes/lowercasedName(_:)``);
    /// the others go through Foundation, as before.
    static func decodedQueryName(_ name: String) -> String {
        let plain = name.utf8.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: "%") && $0 != UInt8(ascii: "+") }
        guard plain else { return (name.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? name).lowercased() }
        return HTTPFieldBytes.lowercasedName(name)
    }

    /// Whether the field name in `raw[start..<end]` is redacted (``isRedactedHeader(_:)`` on bytes).
    func isRedactedHeader(_ raw: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Bool {
        enabled && headerNameList.contains { RequestFields.equalsIgnoringCase(UnsafeRawBufferPointer(rebasing: raw[start..<end]), $0) }
    }

    private func merged(_ parts: [ShellQuoting.Part]) -> [ShellQuoting.Part] {
        var out: [ShellQuoting.Part] = []
        for part in parts {
            if case .literal(let b) = part, case .literal(let a)? = out.last {
                out[out.count - 1] = .literal(a + b)
            } else {
                out.append(part)
            }
        }
        return out
    }
}
