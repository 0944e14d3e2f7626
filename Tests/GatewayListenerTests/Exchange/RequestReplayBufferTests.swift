@testable import GatewayListener
import NIOCore
import Testing

/// The copy of a request body kept for a retry or a replay, as a pure value:
/// what it holds and what it says about sending the body again.
struct RequestReplayBufferTests {
    static func part(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    @Test func aDeclaredBodyWithinTheLimitIsComingThenReadyByteForByte() {
        var buffer = RequestReplayBuffer(limit: 10, declaredLength: 5)
        #expect(buffer.availability(within: 10) == .coming)
        buffer.append(Self.part("he"))
        buffer.append(Self.part("llo"))
        #expect(buffer.availability(within: 10) == .coming, "all bytes, but the end is not in yet")
        buffer.end()
        #expect(buffer.availability(within: 10) == .ready(Self.part("hello")))
        #expect(buffer.received == 5)
    }

    @Test func aDeclaredBodyOverTheLimitIsNeverKept() {
        var buffer = RequestReplayBuffer(limit: 4, declaredLength: 5)
        #expect(buffer.availability(within: 4) == .unavailable)
        buffer.append(Self.part("hello"))
        buffer.end()
        #expect(buffer.availability(within: 4) == .unavailable)
        #expect(buffer.received == 5)
    }

    @Test func aChunkedBodyIsUnknownUntilItEndsOrOutgrowsTheLimit() {
        var fits = RequestReplayBuffer(limit: 6, declaredLength: nil)
        #expect(fits.availability(within: 6) == .unknown)
        fits.append(Self.part("abc"))
        fits.append(Self.part("def"))
        #expect(fits.availability(within: 6) == .unknown, "exactly the limit is still kept")
        fits.end()
        #expect(fits.availability(within: 6) == .ready(Self.part("abcdef")))

        var over = RequestReplayBuffer(limit: 6, declaredLength: nil)
        over.append(Self.part("abcd"))
        over.append(Self.part("efg"))
        #expect(over.availability(within: 6) == .unavailable)
        over.append(Self.part("h"))
        over.end()
        #expect(over.availability(within: 6) == .unavailable, "once over, always over")
        #expect(over.received == 8)
    }

    @Test func aSmallerLimitAsksMoreOfTheSameCopy() {
        // The copy is kept up to the larger limit (a 401 replay's); a retry allows less.
        var declared = RequestReplayBuffer(limit: 10, declaredLength: 8)
        #expect(declared.availability(within: 10) == .coming)
        #expect(declared.availability(within: 4) == .unavailable)
        declared.append(Self.part("12345678"))
        declared.end()
        #expect(declared.availability(within: 4) == .unavailable)
        #expect(declared.availability(within: 8) == .ready(Self.part("12345678")))

        var chunked = RequestReplayBuffer(limit: 10, declaredLength: nil)
        chunked.append(Self.part("123"))
        #expect(chunked.availability(within: 4) == .unknown)
        chunked.append(Self.part("45"))
        #expect(chunked.availability(within: 4) == .unavailable)
        #expect(chunked.availability(within: 10) == .unknown)
    }

    @Test func anEmptyChunkedBodyIsReadyAndEmpty() {
        var buffer = RequestReplayBuffer(limit: 10, declaredLength: nil)
        buffer.end()
        #expect(buffer.availability(within: 10) == .ready(ByteBuffer()))
    }

    @Test func certainAndPossible() {
        let ready = RequestReplayBuffer.Availability.ready(Self.part("x"))
        #expect(ready.isCertain && ready.isPossible)
        #expect(RequestReplayBuffer.Availability.coming.isCertain)
        #expect(!RequestReplayBuffer.Availability.unknown.isCertain && RequestReplayBuffer.Availability.unknown.isPossible)
        #expect(!RequestReplayBuffer.Availability.unavailable.isCertain && !RequestReplayBuffer.Availability.unavailable.isPossible)
    }
}
