import NIOCore
public import NIOHTTP1

/// A response on its way from an upstream (or the gateway itself) to the client.
///
/// `headers` hold end-to-end headers: hop-by-hop headers of the upstream response
/// are removed by the upstream client before it hands the response on.
public struct ProxyResponse: Sendable {
    public var status: HTTPResponseStatus
    public var headers: HTTPHeaders
    public var body: ProxyBody

    public init(status: HTTPResponseStatus, headers: HTTPHeaders = [:], body: ProxyBody = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
