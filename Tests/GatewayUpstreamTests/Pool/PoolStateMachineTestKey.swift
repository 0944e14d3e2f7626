@testable import GatewayUpstream

/// A key for the pool machine's tests: a name, and the mode its connections
/// start in. A string literal is an HTTP/1.1 key.
struct TestKey: PoolKey, ExpressibleByStringLiteral, CustomStringConvertible {
    let name: String
    let initialMode: PoolKeyMode

    init(_ name: String, _ mode: PoolKeyMode) {
        self.name = name
        self.initialMode = mode
    }

    init(stringLiteral name: String) {
        self.init(name, .http1)
    }

    /// A key that asks for HTTP/2.
    static func h2(_ name: String) -> TestKey { TestKey(name, .http2) }
    /// An `auto` key: its first connection's ALPN decides.
    static func auto(_ name: String) -> TestKey { TestKey(name, .negotiating) }

    var description: String { name }
}
