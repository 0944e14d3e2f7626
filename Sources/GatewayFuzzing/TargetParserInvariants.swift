import GatewayCore
import GatewayListener

/// A parsed request target is well formed (lowercase canonical host, port in
/// range, origin-form path) and, written out again, parses to the same value.
enum TargetParserInvariants {
    /// Byte comparisons throughout: `String.hasPrefix` compares characters, and
    /// `/` followed by a combining mark is another character.
    static let slash = UInt8(ascii: "/")

    static func check(_ input: [UInt8]) throws(InvariantViolation) {
        let uri = String(decoding: input, as: UTF8.self)
        try check(uri: uri, isConnect: false)
        try check(uri: uri, isConnect: true)
    }

    static func check(uri: String, isConnect: Bool) throws(InvariantViolation) {
        guard let parsed = ClientTarget.parse(uri, isConnect: isConnect) else { return }
        func require(_ condition: Bool, _ message: String) throws(InvariantViolation) {
            try InvariantViolation.require(condition, .targetParser, "\(message): \(uri.debugDescription) -> \(parsed)")
        }
        switch parsed {
        case .origin(let path):
            try require(!isConnect && path == uri && path.utf8.first == slash, "origin-form is the target itself")
        case .authority(let host, let port):
            try require(isConnect, "authority-form only for CONNECT")
            try checkHost(host, port: port, require)
            let again = ClientTarget.parse(authority(host, port), isConnect: true)
            try require(again == parsed, "re-serialized authority parses to \(again.map { "\($0)" } ?? "nil")")
        case .absolute(let scheme, let host, let port, let target):
            try require(!isConnect, "absolute-form not for CONNECT")
            try checkHost(host, port: port, require)
            try require(target.utf8.first == slash && !target.utf8.contains(UInt8(ascii: "#")), "target is a path and query without fragment")
            let written = "\(scheme.rawValue)://\(authority(host, port))\(target)"
            let again = ClientTarget.parse(written, isConnect: false)
            try require(again == parsed, "re-serialized \(written.debugDescription) parses to \(again.map { "\($0)" } ?? "nil")")
            if port == scheme.defaultPort {
                let short = "\(scheme.rawValue)://\(authority(host, nil))\(target)"
                let shortAgain = ClientTarget.parse(short, isConnect: false)
                try require(shortAgain == parsed, "\(short.debugDescription) parses to \(shortAgain.map { "\($0)" } ?? "nil")")
            }
        }
    }

    /// A host is a lowercase name of `[a-z0-9._-]` that is no IPv4 spelling a
    /// resolver reads differently, or an IPv6 address in its canonical text.
    private static func checkHost(
        _ host: String, port: Int, _ require: (Bool, String) throws(InvariantViolation) -> Void
    ) throws(InvariantViolation) {
        try require((1...65535).contains(port), "port in 1...65535")
        try require(!host.isEmpty, "host not empty")
        if host.utf8.contains(UInt8(ascii: ":")) {
            let address = IPAddress(host)
            try require(address != nil && address?.isIPv4 == false && address?.description == host, "IPv6 host in canonical text")
        } else {
            let nameBytes = host.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
            try require(nameBytes, "host of lowercase name bytes")
            try require(!IPAddress.isNonCanonicalIPv4(host), "no non-canonical IPv4 host")
        }
    }

    static func authority(_ host: String, _ port: Int?) -> String {
        let name = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        return port.map { "\(name):\($0)" } ?? name
    }
}
