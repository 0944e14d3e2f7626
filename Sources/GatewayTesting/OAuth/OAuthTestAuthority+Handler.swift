import Foundation
public import GatewayCore
import NIOCore
import NIOHTTP1

extension OAuthTestAuthority {
    /// The token endpoint as an in-process ``HTTPRequestSender`` (no socket): any
    /// request is answered by ``respond(to:)``. For unit tests of token clients.
    public var tokenEndpoint: any HTTPRequestSender {
        ClosureRequestSender { request, _ in
            await TestResponse.proxyResponse(self.respond(to: try await RecordedRequest(request)))
        }
    }
}

extension RecordedRequest {
    /// The request as an upstream would receive it (body read into memory).
    public init(_ request: ProxyRequest) async throws {
        let body = try await request.body.collect(upTo: 16 * 1024 * 1024)
        self.init(
            method: request.method.rawValue,
            target: request.target,
            headers: request.headers.map { [$0.name, $0.value] },
            body: Array(body.readableBytesView)
        )
    }
}

extension TestResponse {
    /// This response as the upstream pool would hand it on.
    public static func proxyResponse(_ response: TestResponse) -> ProxyResponse {
        var headers = HTTPHeaders(response.headers)
        if !headers.contains(name: "Content-Length") {
            headers.add(name: "Content-Length", value: String(response.body.count))
        }
        return ProxyResponse(status: HTTPResponseStatus(statusCode: response.status), headers: headers, body: .bytes(ByteBuffer(bytes: response.body)))
    }
}
