import GatewayCore
import NIOCore
import NIOHTTP1

/// Tricky requests for the curl round-trip: each must reach the upstream with
/// the same method, target, headers (order, duplicates) and body bytes.
struct TraceCorpusCase: Sendable, CustomStringConvertible {
    var name: String
    var method: HTTPMethod
    var target: String
    var headers: [(String, String)]
    var body: [UInt8]

    var description: String { name }

    func request(port: Int) -> ProxyRequest {
        var all = HTTPHeaders()
        all.add(name: "Host", value: "127.0.0.1:\(port)")
        for (name, value) in headers { all.add(name: name, value: value) }
        if !body.isEmpty || method == .POST || method == .PUT || method == .PATCH {
            all.add(name: "Content-Length", value: String(body.count))
        }
        var buffer = ByteBuffer()
        buffer.writeBytes(body)
        return ProxyRequest(
            method: method, scheme: .http, host: "127.0.0.1", port: port, target: target,
            headers: RequestFields.lines(all), body: body.isEmpty ? .empty : .bytes(buffer)
        )
    }

    static func text(_ name: String, _ method: HTTPMethod = .POST, _ target: String = "/echo", headers: [(String, String)] = [("Content-Type", "text/plain")], body: String) -> TraceCorpusCase {
        TraceCorpusCase(name: name, method: method, target: target, headers: headers, body: Array(body.utf8))
    }

    static let all: [TraceCorpusCase] = [
        TraceCorpusCase(name: "plain GET", method: .GET, target: "/echo", headers: [], body: []),
        TraceCorpusCase(name: "GET with query", method: .GET, target: "/echo?a=1&b=two", headers: [("Accept", "application/json")], body: []),
        TraceCorpusCase(name: "query with %-encoding and +", method: .GET, target: "/echo?q=a%20b+c&x=%2F%3F%26%3D%25&e=%E2%9C%93", headers: [], body: []),
        TraceCorpusCase(name: "query with quotes and $", method: .GET, target: "/echo?q=%27x%27&d=$HOME&b=%60id%60", headers: [], body: []),
        TraceCorpusCase(name: "query with brackets (no globbing)", method: .GET, target: "/echo?a[]=1&a[]=2&b={x}", headers: [], body: []),
        TraceCorpusCase(name: "dot segments kept", method: .GET, target: "/echo/../echo/./x", headers: [], body: []),
        TraceCorpusCase(name: "HEAD", method: .HEAD, target: "/echo", headers: [("X-Probe", "1")], body: []),
        TraceCorpusCase(name: "OPTIONS", method: .OPTIONS, target: "/echo", headers: [("Origin", "https://example.com"), ("Access-Control-Request-Method", "PUT")], body: []),
        TraceCorpusCase(name: "DELETE without body", method: .DELETE, target: "/echo/items/1", headers: [], body: []),
        TraceCorpusCase(name: "POST without body", method: .POST, target: "/echo", headers: [], body: []),
        TraceCorpusCase(name: "empty header value", method: .GET, target: "/echo", headers: [("X-Empty", ""), ("X-After", "1")], body: []),
        TraceCorpusCase(name: "duplicate headers in order", method: .GET, target: "/echo", headers: [("X-Dup", "1"), ("Accept", "text/html"), ("X-Dup", "2"), ("x-dup", "3")], body: []),
        TraceCorpusCase(name: "header with single quotes", method: .GET, target: "/echo", headers: [("X-Quote", "it's 'quoted' ''")], body: []),
        TraceCorpusCase(name: "header with double quotes and backslash", method: .GET, target: "/echo", headers: [("X-Q", "say \"hi\" \\ \\\\n \\'")], body: []),
        TraceCorpusCase(name: "header with $HOME, backticks, $(...)", method: .GET, target: "/echo", headers: [("X-Shell", "$HOME `id` $(whoami) ${PATH} $1 $@")], body: []),
        TraceCorpusCase(name: "header with ! and % and &;|<>", method: .GET, target: "/echo", headers: [("X-Bang", "!! !$ %s %n %% & ; | < > * ? ~ #")], body: []),
        TraceCorpusCase(name: "header starting with @", method: .GET, target: "/echo", headers: [("X-At", "@/etc/passwd")], body: []),
        TraceCorpusCase(name: "unicode header value", method: .GET, target: "/echo", headers: [("X-Unicode", "héllo wörld ✓ 日本語 🚀")], body: []),
        TraceCorpusCase(name: "long header (8 KiB)", method: .GET, target: "/echo", headers: [("X-Long", String(repeating: "abcdefgh", count: 1024))], body: []),
        TraceCorpusCase(name: "User-Agent and Accept from client", method: .GET, target: "/echo", headers: [("User-Agent", "MyApp/1.0 (iOS)"), ("Accept", "*/*")], body: []),
        text("JSON body", headers: [("Content-Type", "application/json")], body: #"{"name":"O'Brien","q":"\"x\"","path":"C:\\dir","cost":"$5 `x` !"}"#),
        text("body with single quotes", body: "it's 'a' test ''' '"),
        text("body with newlines and tabs", body: "line1\nline2\n\tindented\n\n"),
        text("body with shell metacharacters", body: "$HOME `id` $(id) ${X} !! %s %% \\ \\\\ \" ; & | * ?"),
        text("unicode body", body: "héllo ✓ 日本語 🚀"),
        text("body starting with @ (file)", body: "@/etc/passwd"),
        TraceCorpusCase(name: "body with CR (file)", method: .POST, target: "/echo", headers: [("Content-Type", "text/plain")], body: Array("a\r\nb\r\n".utf8)),
        TraceCorpusCase(name: "binary body with NUL (file)", method: .POST, target: "/echo", headers: [("Content-Type", "application/octet-stream")], body: [0, 1, 2, 0xFF, 0xFE, 0, 10, 13, 39, 34]),
        TraceCorpusCase(name: "invalid UTF-8 body (file)", method: .PUT, target: "/echo", headers: [("Content-Type", "text/plain")], body: [0x68, 0x69, 0xC3, 0x28, 0xA0]),
        text("PATCH with body", .PATCH, "/echo/items/7", headers: [("Content-Type", "application/merge-patch+json")], body: #"{"a":null}"#),
        text("DELETE with body", .DELETE, "/echo/items/7", body: "reason=gone"),
        text("GET with body", .GET, "/echo", body: "odd but legal"),
        text("PUT without content type", .PUT, "/echo", headers: [], body: "no type"),
        text("form body", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: "a=1&b=%20x+y&c=%27"),
        TraceCorpusCase(name: "large body 100 KiB (file)", method: .POST, target: "/echo", headers: [("Content-Type", "text/plain")], body: Array(String(repeating: "0123456789abcdef", count: 6400).utf8)),
        TraceCorpusCase(name: "custom method", method: .RAW(value: "PURGE"), target: "/echo", headers: [], body: []),
    ]
}
