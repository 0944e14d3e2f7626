/// One HTTP/2 stream's send window as its writer sees it, without I/O:
/// whether more response DATA may be written now.
///
/// NIOHTTP2 buffers DATA that its windows do not allow yet and reports the
/// stream's send window after every change (`NIOHTTP2WindowUpdatedEvent`'s
/// `outboundWindowSize`): it shrinks only when DATA goes out and grows only
/// with the peer's WINDOW_UPDATE (or SETTINGS). So what was written and not
/// yet seen to shrink the window is still buffered (``unsent``), and the
/// stream has room while the window, less that, is open and the buffered
/// bytes stay under ``maxUnsent`` (when the connection's window is the one
/// closed, each stream holds at most that much).
package struct HTTP2SendWindow: Equatable, Sendable {
    /// Bytes a stream may have buffered in NIOHTTP2 before it stops being writable.
    package static let maxUnsent = 64 * 1024

    /// The window NIOHTTP2 last reported (or the stream's initial window).
    package private(set) var window: Int
    /// Bytes written that NIOHTTP2 has not sent yet.
    package private(set) var unsent = 0
    private var heardReport = false

    /// `initial`: the peer's SETTINGS_INITIAL_WINDOW_SIZE (RFC 9113's default until it says).
    package init(initial: Int = 65_535) {
        window = initial
    }

    /// The stream's initial window, as NIOHTTP2 created it (unless a report came first).
    package mutating func opened(initial: Int) {
        guard !heardReport else { return }
        window = initial
    }

    /// DATA of `bytes` was written to NIOHTTP2.
    package mutating func wrote(_ bytes: Int) {
        unsent += bytes
    }

    /// NIOHTTP2 reported the window: a decrease is DATA that went out.
    package mutating func reported(_ size: Int) {
        heardReport = true
        if size < window { unsent = max(0, unsent - (window - size)) }
        window = size
    }

    package var hasRoom: Bool {
        window - unsent > 0 && unsent < Self.maxUnsent
    }
}
