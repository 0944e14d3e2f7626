import GatewayCore

extension HTTP1ResponseHeadParser {
    /// Whether a `Transfer-Encoding` value (every field's, joined) is `chunked`
    /// alone, in any case: the one transfer coding the gateway decodes, and
    /// frames again for the client. Not for another coding (`gzip`, `deflate`,
    /// `gzip, chunked`, `chunked, gzip`), `chunked` twice, or no coding at all.
    static func isChunkedAlone(_ value: String) -> Bool {
        var count = 0
        var chunked = false
        HopByHopHeaders.forEachToken(in: value) { coding in
            count += 1
            chunked = HopByHopHeaders.equalsIgnoringCase("chunked", coding)
        }
        return count == 1 && chunked
    }

    /// The codings of a `Transfer-Encoding` value, for the error that names
    /// them: each one's name up to its first byte that is not a token byte
    /// (parameters and control bytes left out), joined with `, `, cut at
    /// 64 bytes. `gzip, chunked` for `gzip , chunked;x=1`.
    static func codingNames(_ value: String) -> String {
        var names: [String] = []
        HopByHopHeaders.forEachToken(in: value) { coding in
            names.append(String(decoding: coding.utf8.prefix(while: HTTPFieldBytes.isTokenByte), as: UTF8.self))
        }
        let joined = names.joined(separator: ", ")
        guard joined.utf8.count > 64 else { return joined }
        return String(decoding: joined.utf8.prefix(64), as: UTF8.self) + "..."
    }
}
