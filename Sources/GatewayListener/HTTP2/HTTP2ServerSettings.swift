package import NIOHTTP2

/// How the gateway's HTTP/2 server side (an intercepted client that chose
/// `h2`) configures `NIOHTTP2Handler`, in one place: the listener builds its
/// handler from these (`ClientConnectionHandler+HTTP2.swift`), and so does the
/// `http2-frames` fuzz target (GatewayFuzzing), so that what is fuzzed is what
/// clients meet.
///
/// - SETTINGS_MAX_CONCURRENT_STREAMS: ``maxConcurrentStreams``;
/// - SETTINGS_MAX_HEADER_LIST_SIZE: the listener's head limit
///   (`limits.max_head_bytes`), as for an HTTP/1.1 request head;
/// - everything else is NIOHTTP2's default (initial windows of 65,535 bytes,
///   frames of at most 16,384 bytes, its limits on resets, CONTINUATION and
///   control frames, glitches).
package enum HTTP2ServerSettings {
    /// Streams at once per connection (SETTINGS_MAX_CONCURRENT_STREAMS).
    package static let maxConcurrentStreams = 100
    /// The receive windows the connection's handler keeps refilling: a
    /// stream's (as its exchange takes the request body) and the connection's
    /// (as frames arrive). HTTP/2's initial 65,535 bytes, as announced.
    package static let streamWindow = 65_535
    package static let connectionWindow = 65_535

    /// The connection's configuration; `maxHeaderListSize` is the listener's head limit.
    package static func connection(maxHeaderListSize: Int) -> NIOHTTP2Handler.ConnectionConfiguration {
        var configuration = NIOHTTP2Handler.ConnectionConfiguration()
        configuration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: maxHeaderListSize),
        ]
        // Frames a client sent before our RST_STREAM reached it are ignored for
        // this many reset streams (NIOHTTP2: 32; beyond, a connection error).
        configuration.maximumRecentlyResetStreams = 4 * maxConcurrentStreams
        // A request's fields are checked once, as they are translated
        // (HTTP2Translation.request), and the responses are built valid: NIOHTTP2's
        // own walks over every section are off. Its content-length check read each
        // section's fields again (and its `:method`), both ways: the translation
        // reads the length, and the stream holds the DATA to it (ClientHTTP2Stream).
        configuration.headerBlockValidation = .disabled
        configuration.contentLengthValidation = .disabled
        return configuration
    }

    /// Each stream's configuration (NIOHTTP2's defaults).
    package static var stream: NIOHTTP2Handler.StreamConfiguration {
        NIOHTTP2Handler.StreamConfiguration()
    }
}
