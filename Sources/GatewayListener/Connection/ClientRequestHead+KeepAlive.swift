import GatewayCore

extension ClientRequestHead {
    /// A request after which the framer stops (an upgrade it expects us to
    /// perform): the connection cannot carry another request.
    var isUpgradeLike: Bool {
        method == .CONNECT || headers.contains(name: "upgrade")
    }

    /// Whether the client connection may carry another request after this one:
    /// `isKeepAlive && !isUpgradeLike`, read from the fields' bytes. The
    /// keep-alive rules are NIOHTTP1's (HTTP/1.1 keeps the connection unless
    /// `Connection: close`, HTTP/1.0 closes it unless `Connection:
    /// keep-alive`; both tokens, or either twice, close it).
    var keepsConnection: Bool {
        guard method != .CONNECT else { return false }
        if headers.contains(name: "upgrade") { return false }
        var option: Bool?  // true: keep-alive, false: close
        headers.forEachToken(ofField: "connection") { token in
            if HTTP1HeadLines.equalsIgnoringCase(token, from: 0, to: token.count, "close") {
                option = false
            } else if HTTP1HeadLines.equalsIgnoringCase(token, from: 0, to: token.count, "keep-alive") {
                option = option == nil
            }
        }
        return option ?? (version.major == 1 && version.minor >= 1)
    }
}
