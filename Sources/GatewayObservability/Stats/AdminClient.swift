public import NIOCore
import NIOHTTP1
import NIOPosix

/// A minimal HTTP/1.1 client for the admin port (`gateway stats`, `gateway
/// faults`): one request per connection, plain http on a host the user names.
public enum AdminClient {
    public struct Response: Sendable {
        public var status: Int
        public var body: [UInt8]
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// GETs `path` from `host:port`, failing after `timeout`.
    public static func get(
        host: String,
        port: Int,
        path: String,
        timeout: Duration = .seconds(10),
        eventLoopGroup: (any EventLoopGroup)? = nil
    ) async throws -> Response {
        try await send(.GET, host: host, port: port, path: path, timeout: timeout, eventLoopGroup: eventLoopGroup)
    }

    /// POSTs (no body) to `path`, as a script (``AdminRequest/actionField``): a change such as `/injection/faults/off`.
    public static func post(host: String, port: Int, path: String, timeout: Duration = .seconds(10)) async throws -> Response {
        try await send(.POST, host: host, port: port, path: path, timeout: timeout, eventLoopGroup: nil)
    }

    private static func send(
        _ method: HTTPMethod, host: String, port: Int, path: String, timeout: Duration, eventLoopGroup: (any EventLoopGroup)?
    ) async throws -> Response {
        let eventLoopGroup = eventLoopGroup ?? MultiThreadedEventLoopGroup.singleton
        return try await withThrowingTaskGroup(of: Response.self) { group in
            group.addTask { try await fetch(method, host: host, port: port, path: path, eventLoopGroup: eventLoopGroup) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw Failure(description: "no answer from \(host):\(port) within \(timeout)")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    private static func fetch(
        _ method: HTTPMethod, host: String, port: Int, path: String, eventLoopGroup: any EventLoopGroup
    ) async throws -> Response {
        typealias Connection = NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        let connection: Connection
        do {
            connection = try await ClientBootstrap(group: eventLoopGroup)
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try Connection(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw Failure(description: "cannot connect to the admin port \(host):\(port): \(error)")
        }
        return try await connection.executeThenClose { inbound, outbound in
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
            headers.add(name: "Connection", value: "close")
            headers.add(name: "Accept", value: "application/json")
            if method == .POST {
                headers.add(name: AdminRequest.actionField, value: "1")
                headers.add(name: "Content-Length", value: "0")
            }
            // Head and end in one write: the admin port answers a GET on its head and
            // closes (`Connection: close`), so a separate write of the end could find
            // the channel closed ("I/O on closed channel") on a loaded machine.
            try await outbound.write(contentsOf: [.head(HTTPRequestHead(version: .http1_1, method: method, uri: path, headers: headers)), .end(nil)])
            var status = 0
            var body: [UInt8] = []
            for try await part in inbound {
                switch part {
                case .head(let head): status = Int(head.status.code)
                case .body(let buffer): body.append(contentsOf: buffer.readableBytesView)
                case .end: return Response(status: status, body: body)
                }
            }
            throw Failure(description: "the admin port closed the connection before the end of the response")
        }
    }
}
