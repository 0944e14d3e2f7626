import Crypto
import Foundation
import GatewayCore
import NIOCore
import NIOHTTP1

/// What a WebSocket handshake's 101 must say (RFC 6455 §4.1, client side,
/// items 1-4 of "the client MUST validate the server's response"):
/// `Upgrade: websocket`, `Connection: upgrade`, and `Sec-WebSocket-Accept`
/// equal to base64(SHA-1(`Sec-WebSocket-Key` + the protocol's GUID)).
/// Anything else is not a WebSocket: the gateway answers 502
/// `upstream_protocol_error` and closes, instead of splicing the two
/// connections into a raw tunnel past every per-request policy.
struct WebSocketUpgrade: Equatable, Sendable {
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The accept value a genuine answer carries; nil when the request had no key
    /// (no 101 can be valid then).
    let expectedAccept: String?

    init(requestKey: String?) {
        expectedAccept = requestKey.map { Self.accept(forKey: $0) }
    }

    init(for request: ProxyRequest) {
        self.init(requestKey: request.headers.first(name: "sec-websocket-key"))
    }

    static func accept(forKey key: String) -> String {
        let digest = Insecure.SHA1.hash(data: Array((key.trimmingSpaces + guid).utf8))
        return Data(digest).base64EncodedString()
    }

    /// Why `fields` (every field of the 101, hop-by-hop ones included) is not a
    /// valid answer, or nil when it is.
    func problem(with fields: HTTPHeaders) -> String? {
        guard fields["upgrade"].contains(where: { Self.lists($0, "websocket") }) else {
            return "101 without Upgrade: websocket"
        }
        guard fields["connection"].contains(where: { Self.lists($0, "upgrade") }) else {
            return "101 without Connection: upgrade"
        }
        let accept = fields["sec-websocket-accept"]
        guard let expectedAccept, accept.count == 1, accept[0].trimmingSpaces == expectedAccept else {
            return accept.isEmpty ? "101 without Sec-WebSocket-Accept" : "101 with a Sec-WebSocket-Accept that does not match the key"
        }
        return nil
    }

    private static func lists(_ value: String, _ token: String) -> Bool {
        value.split(separator: ",").contains { $0.trimmingSpaces.lowercased() == token }
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
