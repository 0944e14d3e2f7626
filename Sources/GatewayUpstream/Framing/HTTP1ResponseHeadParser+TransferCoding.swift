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
}
