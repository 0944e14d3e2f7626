import NIOHTTP2

/// How NIOHTTP2's errors are told apart.
package enum HTTP2StreamErrors {
    /// Errors NIOHTTP2 raises for one stream, after its RST_STREAM: the
    /// stream's fields or length broke the rules (RFC 9113 §8.1.1, §8.2). It
    /// fires connection and stream errors alike (the underlying error only), so
    /// they are told apart by kind; any other error was a connection error
    /// (NIOHTTP2 sent GOAWAY), and the connection closes. `StreamClosed` is
    /// not among them: frames on a stream reset longer ago than NIOHTTP2
    /// remembers are a connection error of that kind.
    package static func isStreamError(_ error: any Error) -> Bool {
        switch error {
        case is NIOHTTP2Errors.StreamError,
            is NIOHTTP2Errors.ContentLengthViolated, is NIOHTTP2Errors.ContentLengthHeadersMismatch,
            is NIOHTTP2Errors.ContentLengthHeaderNegative, is NIOHTTP2Errors.ContentLengthHeaderMalformedValue,
            is NIOHTTP2Errors.MissingPseudoHeader, is NIOHTTP2Errors.DuplicatePseudoHeader,
            is NIOHTTP2Errors.PseudoHeaderAfterRegularHeader, is NIOHTTP2Errors.UnknownPseudoHeader,
            is NIOHTTP2Errors.UnsupportedPseudoHeader, is NIOHTTP2Errors.InvalidPseudoHeaders,
            is NIOHTTP2Errors.MissingHostHeader, is NIOHTTP2Errors.DuplicateHostHeader, is NIOHTTP2Errors.EmptyPathHeader,
            is NIOHTTP2Errors.InvalidStatusValue, is NIOHTTP2Errors.TrailersWithoutEndStream,
            is NIOHTTP2Errors.ForbiddenHeaderField, is NIOHTTP2Errors.InvalidPseudoHeaderValue,
            is NIOHTTP2Errors.InvalidHTTP2HeaderFieldName, is NIOHTTP2Errors.InvalidHTTP2HeaderFieldValue:
            true
        default:
            false
        }
    }
}
