/// The parts of a PostgreSQL connection URL,
/// `postgres://user:password@host:port/database?sslmode=require`
/// (`postgresql://` too; user, password and database percent-decoded).
/// `description` never shows the password.
public struct PostgresURL: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String?
    /// `sslmode` from the query, when it is one this gateway supports.
    public var sslMode: PostgresStateConfig.TLSMode?

    public static let defaultPort = 5432

    public init(host: String, port: Int = PostgresURL.defaultPort, username: String, password: String? = nil, database: String? = nil, sslMode: PostgresStateConfig.TLSMode? = nil) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.sslMode = sslMode
    }

    /// `postgres://user@host:port/database`, without the password.
    public var description: String {
        let hostText = host.contains(":") ? "[\(host)]" : host
        return "postgres://\(username)@\(hostText):\(port)/\(database ?? "")"
    }

    /// Parses `text`; the error says what is wrong without repeating the text (it holds a password).
    public static func parse(_ text: String) -> Result<PostgresURL, PostgresURLProblem> {
        var rest = Substring(text)
        guard let schemeEnd = rest.range(of: "://") else { return .failure(.init("expected postgres://user:password@host:port/database")) }
        let scheme = rest[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "postgres" || scheme == "postgresql" else { return .failure(.init("the scheme must be postgres:// or postgresql://")) }
        rest = rest[schemeEnd.upperBound...]
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        guard let at = rest.lastIndex(of: "@") else { return .failure(.init("the URL names no user (postgres://user:password@host/database)")) }
        let userInfo = rest[..<at]
        let hostPort = rest[rest.index(after: at)...]
        let userPart = userInfo.firstIndex(of: ":").map { userInfo[..<$0] } ?? userInfo
        let passwordPart = userInfo.firstIndex(of: ":").map { userInfo[userInfo.index(after: $0)...] }
        guard let username = percentDecoded(userPart), !username.isEmpty else { return .failure(.init("the user name is empty or badly percent-encoded")) }
        var password: String?
        if let passwordPart {
            guard let decoded = percentDecoded(passwordPart) else { return .failure(.init("the password is badly percent-encoded")) }
            password = decoded
        }
        guard let (host, port) = splitHostPort(hostPort) else { return .failure(.init("expected host or host:port (port 1-65535) after '@'")) }
        var database: String?
        if !path.isEmpty {
            guard let decoded = percentDecoded(path), !decoded.contains("/") else { return .failure(.init("the database name is badly percent-encoded")) }
            database = decoded
        }
        var sslMode: PostgresStateConfig.TLSMode?
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0] == "sslmode" else { continue }
            switch parts[1] {
            case "disable": sslMode = .disable
            case "require": sslMode = .require
            case "verify-full": sslMode = .verifyFull
            default: return .failure(.init("sslmode must be disable, require or verify-full; got '\(parts[1].prefix(20))'"))
            }
        }
        return .success(PostgresURL(host: host, port: port, username: username, password: password, database: database, sslMode: sslMode))
    }

    private static func splitHostPort(_ text: Substring) -> (String, Int)? {
        var host = text
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
        } else if let colon = text.lastIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty else { return nil }
        var port = defaultPort
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value) else { return nil }
            port = value
        }
        return (String(host), port)
    }

    /// `%XX` decoded; nil when an escape is malformed or the result is not UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Why a PostgreSQL URL was refused (never quoting the URL, which holds a password).
public struct PostgresURLProblem: Error, Sendable, Equatable {
    public let message: String
    init(_ message: String) { self.message = message }
}

extension PostgresURL: CustomReflectable {
    /// Keeps the password out of `dump(_:)` and default struct printing.
    public var customMirror: Mirror {
        Mirror(self, children: ["host": host, "port": port, "username": username, "password": password == nil ? "nil" : "<redacted>", "database": database as Any], displayStyle: .struct)
    }
}
