package import GatewayCore
package import NIOHTTP1

/// A client's request head as the listener reads it: request line and fields,
/// the fields kept as the bytes that were read (``RequestFields``) so that no
/// string is made per field. `HTTPRequestHead`'s names, so steps read it alike.
package struct ClientRequestHead: Sendable, Equatable {
    package var method: HTTPMethod
    package var uri: String
    package var version: HTTPVersion
    package var headers: RequestFields

    package init(version: HTTPVersion, method: HTTPMethod, uri: String, headers: RequestFields = RequestFields()) {
        self.version = version
        self.method = method
        self.uri = uri
        self.headers = headers
    }

    /// A head made elsewhere (HTTP/2's translation, tests): its fields are all "added".
    package init(version: HTTPVersion, method: HTTPMethod, uri: String, headers: HTTPHeaders) {
        self.init(version: version, method: method, uri: uri, headers: RequestFields(headers))
    }
}
