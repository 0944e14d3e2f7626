// An HTTP/2 load client for the HTTP/2 rows of scripts/bench.sh (issue 37).
// h2load (Debian's nghttp2-client) cannot send CONNECT; this can. Each of C
// connections opens TCP to an HTTP proxy, sends `CONNECT host:port HTTP/1.1`,
// reads the 2xx, then speaks TLS inside the tunnel (SNI = host, ALPN `h2`,
// trusting --ca) and HTTP/2, and keeps S streams busy with GET requests for D
// seconds: as each stream ends, the next opens. With --direct it connects to
// the target itself (TLS and HTTP/2, no CONNECT): the same load against a
// TLS-terminating reverse proxy (HAProxy) or the origin.
//
// Prints one JSON object on stdout: requests (responses completed within the
// run), responses by status, errors by kind, duration, requests per second,
// latency percentiles in µs (from opening a stream to its END_STREAM), and
// the connections it opened (a closed connection is reopened after 100 ms).
//
//   H2ProxyLoad --proxy 127.0.0.1:8080 --target api.example.test:443 --ca gateway-ca.pem \
//       --path /1k --connections 10 --streams 50 --seconds 10
//   H2ProxyLoad --direct --target 127.0.0.1:8443 --ca bench-ca.pem --path /1k
import Foundation
import NIOCore
import NIOHPACK
import NIOPosix
import NIOSSL

struct UsageError: Error {
    let message: String
}

/// The command line.
struct Options {
    var proxy: (host: String, port: Int)?
    var target: (host: String, port: Int)?
    var direct = false
    var path = "/"
    var ca: String?
    var serverName: String?
    var connections = 10
    var streams = 10
    var seconds = 10.0
    var threads = 1

    static let usage = """
        usage: H2ProxyLoad (--proxy HOST:PORT | --direct) --target HOST:PORT [--path /1k] [--ca CA.pem]
                           [--connections 10] [--streams 10] [--seconds 10] [--threads 1] [--server-name NAME]
          --proxy HOST:PORT   an HTTP proxy: CONNECT to the target through it, then TLS + HTTP/2 inside
          --direct            no proxy: TLS + HTTP/2 straight to the target
          --target HOST:PORT  the CONNECT target (with --proxy) or the address to connect to (--direct)
          --ca FILE           PEM roots to trust (default: the system's)
          --server-name NAME  SNI and the name checked (default: the target's host; none for an IP address)
        """

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            var name = argument
            var inline: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            func value() throws -> String {
                if let inline { return inline }
                guard let next = rest.popFirst() else { throw UsageError(message: "\(name) needs a value") }
                return next
            }
            func number<T: LosslessStringConvertible & Comparable & Numeric>(_: T.Type) throws -> T {
                let text = try value()
                guard let parsed = T(text), parsed > 0 else { throw UsageError(message: "\(name): expected a positive number, got '\(text)'") }
                return parsed
            }
            switch name {
            case "--proxy": options.proxy = try hostPort(try value(), name: name)
            case "--target": options.target = try hostPort(try value(), name: name)
            case "--direct": options.direct = true
            case "--path": options.path = try value()
            case "--ca": options.ca = try value()
            case "--server-name": options.serverName = try value()
            case "--connections": options.connections = try number(Int.self)
            case "--streams": options.streams = try number(Int.self)
            case "--seconds": options.seconds = try number(Double.self)
            case "--threads": options.threads = try number(Int.self)
            case "-h", "--help": throw UsageError(message: "")
            default: throw UsageError(message: "unknown option \(argument)")
            }
        }
        guard options.target != nil else { throw UsageError(message: "--target is required") }
        guard options.direct != (options.proxy != nil) else { throw UsageError(message: "give one of --proxy and --direct") }
        guard options.path.hasPrefix("/") else { throw UsageError(message: "--path must start with /") }
        return options
    }

    /// `host:port` or `[v6]:port`.
    static func hostPort(_ text: String, name: String) throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else {
            throw UsageError(message: "\(name): expected HOST:PORT, got '\(text)'")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw UsageError(message: "\(name): expected HOST:PORT, got '\(text)'") }
        return (host, port)
    }

    static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || host.allSatisfy { $0 == "." || $0.isASCII && $0.isNumber }
    }
}

/// What every connection of a run shares.
struct LoadPlan: Sendable {
    /// Where TCP goes: the proxy, or the target with --direct.
    let connectHost: String
    let connectPort: Int
    /// `host:port` for CONNECT; nil with --direct.
    let tunnelAuthority: String?
    /// SNI and the name the certificate must carry; nil for an IP address (checked against the address).
    let serverName: String?
    let tls: NIOSSLContext
    /// The request of every stream.
    let request: HPACKHeaders
    let streams: Int
    let deadline: NIODeadline
    /// How long in-flight streams may take after the deadline before the connection is closed.
    let grace: TimeAmount
}

/// What one connection counted; merged at the end.
struct LoadStats: Sendable {
    var responses: [Int: Int] = [:]
    var errors: [String: Int] = [:]
    var latenciesMicros: [UInt32] = []
    var bodyBytes = 0
    var connectionsOpened = 0

    mutating func merge(_ other: LoadStats) {
        responses.merge(other.responses, uniquingKeysWith: +)
        errors.merge(other.errors, uniquingKeysWith: +)
        latenciesMicros += other.latenciesMicros
        bodyBytes += other.bodyBytes
        connectionsOpened += other.connectionsOpened
    }
}

/// The run: options, connections, the report.
enum LoadRun {
    static func run() throws {
        let options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
        let target = options.target!
        var tls = TLSConfiguration.makeClientConfiguration()
        if let ca = options.ca { tls.trustRoots = .file(ca) }
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let authority = target.port == 443 ? target.host : "\(target.host.contains(":") ? "[\(target.host)]" : target.host):\(target.port)"
        let connectTo = options.proxy ?? target
        let start = NIODeadline.now()
        let plan = LoadPlan(
            connectHost: connectTo.host,
            connectPort: connectTo.port,
            tunnelAuthority: options.direct ? nil : (target.host.contains(":") ? "[\(target.host)]:\(target.port)" : "\(target.host):\(target.port)"),
            serverName: options.serverName ?? (Options.isIPAddress(target.host) ? nil : target.host),
            tls: context,
            request: HPACKHeaders([(":method", "GET"), (":scheme", "https"), (":authority", authority), (":path", options.path)]),
            streams: options.streams,
            deadline: start + .nanoseconds(Int64(options.seconds * 1e9)),
            grace: .seconds(5)
        )

        let group = MultiThreadedEventLoopGroup(numberOfThreads: options.threads)
        defer { try? group.syncShutdownGracefully() }
        let results = (0..<options.connections).map { _ -> EventLoopFuture<LoadStats> in
            let loop = group.next()
            return loop.flatSubmit {
                let connection = LoadConnection(plan: plan, eventLoop: loop)
                connection.start()
                return connection.result
            }
        }
        var total = LoadStats()
        for stats in try EventLoopFuture<LoadStats>.whenAllSucceed(results, on: group.next()).wait() { total.merge(stats) }
        print(report(total, options: options, authority: authority))
    }

    /// The run's JSON line.
    static func report(_ stats: LoadStats, options: Options, authority: String) -> String {
        let requests = stats.responses.values.reduce(0, +)
        let non2xx = stats.responses.filter { !(200..<400).contains($0.key) }.values.reduce(0, +)
        let latencies = stats.latenciesMicros.sorted()
        func percentile(_ p: Double) -> String {
            guard !latencies.isEmpty else { return "null" }
            let rank = Int((Double(latencies.count) * p).rounded(.up))
            return String(latencies[min(max(rank, 1), latencies.count) - 1])
        }
        let mean = latencies.isEmpty ? "null" : String(format: "%.1f", Double(latencies.reduce(0) { $0 + Int($1) }) / Double(latencies.count))
        let responses = stats.responses.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ")
        let errors = stats.errors.sorted { $0.key < $1.key }.map { "\(json($0.key)): \($0.value)" }.joined(separator: ", ")
        let fields = [
            "\"mode\": \(json(options.direct ? "direct" : "proxy"))",
            "\"proxy\": \(options.proxy.map { json("\($0.host):\($0.port)") } ?? "null")",
            "\"target\": \(json(authority))",
            "\"path\": \(json(options.path))",
            "\"connections\": \(options.connections)",
            "\"streams\": \(options.streams)",
            "\"duration\": \(options.seconds)",
            "\"requests\": \(requests)",
            "\"requests_per_second\": \(String(format: "%.1f", Double(requests) / options.seconds))",
            "\"responses\": {\(responses)}",
            "\"non2xx\": \(non2xx)",
            "\"errors\": {\(errors)}",
            "\"error_count\": \(stats.errors.values.reduce(0, +))",
            "\"latency_us\": {\"p50\": \(percentile(0.5)), \"p90\": \(percentile(0.9)), \"p99\": \(percentile(0.99)), "
                + "\"max\": \(latencies.last.map { String($0) } ?? "null"), \"mean\": \(mean)}",
            "\"body_bytes\": \(stats.bodyBytes)",
            "\"connections_opened\": \(stats.connectionsOpened)",
        ]
        return "{" + fields.joined(separator: ", ") + "}"
    }

    static func json(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 { out += String(format: "\\u%04x", scalar.value) } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }
}

do {
    try LoadRun.run()
} catch let error as UsageError {
    if !error.message.isEmpty { FileHandle.standardError.write(Data("H2ProxyLoad: \(error.message)\n".utf8)) }
    FileHandle.standardError.write(Data((Options.usage + "\n").utf8))
    exit(error.message.isEmpty ? 0 : 2)
} catch {
    FileHandle.standardError.write(Data("H2ProxyLoad: \(error)\n".utf8))
    exit(1)
}
