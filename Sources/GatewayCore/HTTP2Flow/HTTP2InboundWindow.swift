/// One receive window of an HTTP/2 connection the gateway drives (the
/// connection's, or a stream's; upstream or client side), without I/O: when
/// a WINDOW_UPDATE is due and by how much.
///
/// NIOHTTP2 reports the window after every change (`NIOHTTP2WindowUpdatedEvent`'s
/// `inboundWindowSize`: a DATA frame shrank it, a WINDOW_UPDATE sent grew it);
/// the bytes of DATA frames held for a reader that cannot take them yet
/// (``held(_:)``) count as not consumed, so the window is refilled only as they
/// are handed on (``handedOn(_:)``): a slow reader holds its server back by flow
/// control. An increment is due once the window, counting what is held, fell to
/// half the target or below; it refills to the target (as NIOHTTP2's own
/// stream channels do).
package struct HTTP2InboundWindow: Equatable, Sendable {
    package let target: Int
    /// The window NIOHTTP2 last reported; nil before the first report.
    package private(set) var reported: Int?
    /// Bytes of DATA received but not yet handed to the reader.
    package private(set) var heldBytes = 0

    package init(target: Int) {
        self.target = target
    }

    /// NIOHTTP2 reported the window's size: the increment to send, if one is due.
    package mutating func reported(_ size: Int) -> Int? {
        reported = size
        return increment(window: size + heldBytes)
    }

    /// A DATA frame of `bytes` (flow-controlled length) is held for the reader.
    package mutating func held(_ bytes: Int) {
        heldBytes += bytes
    }

    /// Held bytes went to the reader: the increment to send, if one is due now.
    package mutating func handedOn(_ bytes: Int) -> Int? {
        heldBytes = max(0, heldBytes - bytes)
        guard let reported else { return nil }
        return increment(window: reported + heldBytes)
    }

    /// Refills to the target once the window is at most half of it. A negative
    /// window (the peer's SETTINGS shrank it) is refilled by what it lacks.
    private func increment(window: Int) -> Int? {
        guard window < target else { return nil }
        let increment = target - window
        guard window < 0 || increment >= window else { return nil }
        return min(increment, Int(Int32.max))
    }
}
