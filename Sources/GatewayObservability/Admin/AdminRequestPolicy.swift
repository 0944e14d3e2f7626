import GatewayCore

/// What the admin listener checks on a request head before any route:
///
/// - **Host** (DNS rebinding): the admin answers only a `Host` that names it:
///   `localhost`, `127.0.0.1`, `[::1]`, the host it is bound to, the address
///   the client reached (its bound address when it listens on `0.0.0.0`), or a
///   name listed in `listen.admin_hosts`; with or without a port. A page whose
///   own name an attacker rebinds to this address sends its own name, and gets
///   421. A request without `Host` (an HTTP/1.0 probe) is answered: browsers
///   always send one. More than one `Host` is refused.
/// - **method**: GET and HEAD; others get 405 with `Allow: GET, HEAD`, except
///   POST to the injection switch (``switchPrefix``: `gateway faults on|off`),
///   answered only when the request says it is a script's
///   (``AdminRequest/isScripted``), else 403: no web page can flip it.
///
/// Addresses are compared as addresses (`[0::1]` is `::1`, `::ffff:10.0.0.5`
/// is `10.0.0.5`), names case-insensitively.
struct AdminRequestPolicy: Sendable {
    /// Lowercased host names allowed as `Host`.
    private let names: Set<String>
    /// Addresses allowed as `Host` (IPv4-mapped ones as their IPv4 address).
    private let addresses: Set<IPAddress>

    /// `127.0.0.1` and `::1`.
    static let loopbackAddresses: [IPAddress] = [
        IPAddress(bytes: [127, 0, 0, 1])!, IPAddress(bytes: [UInt8](repeating: 0, count: 15) + [1])!,
    ]

    /// - Parameters:
    ///   - bindHost: the host the admin listener binds (`listen.admin`); a wildcard (`0.0.0.0`, `::`) adds nothing.
    ///   - allowedHosts: `listen.admin_hosts`.
    init(bindHost: String, allowedHosts: [String]) {
        var names: Set<String> = ["localhost"]
        var addresses = Set(Self.loopbackAddresses)
        for host in [bindHost] + allowedHosts {
            if let address = IPAddress(host) {
                let unmapped = address.unmapped
                if !unmapped.bytes.allSatisfy({ $0 == 0 }) { addresses.insert(unmapped) }
            } else {
                names.insert(host.lowercased())
            }
        }
        self.names = names
        self.addresses = addresses
    }

    /// The answer that refuses this request, or nil when the routes answer it.
    /// - Parameters:
    ///   - method: the request method, as sent.
    ///   - hostFields: every `Host` field of the request.
    ///   - localAddress: the IP address the client connected to (`Channel.localAddress`), if known.
    func refusal(_ request: AdminRequest, hostFields: [String], localAddress: String?) -> AdminRefusal? {
        guard hostFields.count <= 1, hostFields.first.map({ allows(host: $0, localAddress: localAddress) }) ?? true else {
            return .misdirected
        }
        switch request.method {
        case "GET", "HEAD": return nil
        case "POST" where request.path.hasPrefix(Self.switchPrefix): return request.isScripted ? nil : .notScripted
        default: return .methodNotAllowed
        }
    }

    /// A GET-like request's refusal: `method` on `/`.
    func refusal(method: String, hostFields: [String], localAddress: String?) -> AdminRefusal? {
        refusal(AdminRequest(method: method, path: "/"), hostFields: hostFields, localAddress: localAddress)
    }

    /// The paths that take POST: `/injection/{faults|mocks|replay|record}/{on|off|reset}`.
    static let switchPrefix = "/injection/"

    /// Whether a `Host` field value names this admin listener.
    func allows(host field: String, localAddress: String?) -> Bool {
        guard let host = Self.hostPart(of: field) else { return false }
        guard let address = IPAddress(host)?.unmapped else { return names.contains(host.lowercased()) }
        if addresses.contains(address) { return true }
        guard let localAddress, let local = IPAddress(localAddress)?.unmapped else { return false }
        return address == local
    }

    /// The host of a `Host` field: `name`, `name:port`, `1.2.3.4:port`,
    /// `[v6]` or `[v6]:port` (brackets kept). Nil when malformed: a port that is
    /// not 0 to 5 digits, an empty host, a bare IPv6 address.
    static func hostPart(of field: String) -> Substring? {
        let text = Substring(field)
        let host: Substring
        let rest: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[...close]
            rest = text[text.index(after: close)...]
        } else if let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            rest = text[colon...]
        } else {
            host = text
            rest = ""
        }
        guard !host.isEmpty, rest.isEmpty || isPort(rest) else { return nil }
        return host
    }

    /// `:` followed by at most five ASCII digits (an empty port is allowed by RFC 3986).
    private static func isPort(_ text: Substring) -> Bool {
        text.first == ":" && text.count <= 6 && text.dropFirst().allSatisfy { $0.isASCII && $0.isNumber }
    }
}

/// A request the admin listener refuses before its routes: the status, a
/// JSON error body like the gateway's other errors, and `Allow` for a 405.
struct AdminRefusal: Sendable, Equatable {
    let status: Int
    let code: String
    let message: String
    /// The `Allow` field of a 405.
    let allow: String?

    static let misdirected = AdminRefusal(
        status: 421, code: "misdirected_request",
        message: "the admin listener answers only its own address, localhost, 127.0.0.1, [::1] and the names in listen.admin_hosts",
        allow: nil
    )

    static let methodNotAllowed = AdminRefusal(
        status: 405, code: "method_not_allowed", message: "the admin listener answers GET and HEAD only", allow: "GET, HEAD"
    )

    static let notScripted = AdminRefusal(
        status: 403, code: "admin_action_refused",
        message: "a change through the admin listener needs the field \(AdminRequest.actionField) and no Origin (gateway faults|mocks|replay|record on|off sends it)",
        allow: nil
    )

    /// `{"error": code, "message": ...}` and a newline.
    var body: [UInt8] {
        Array("{\"error\":\(JSONString.quote(code)),\"message\":\(JSONString.quote(message))}\n".utf8)
    }
}
