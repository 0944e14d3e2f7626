import GatewayCore
import GatewayTesting
import NIOHTTP1
import Testing

@testable import GatewayTracing

/// `traceparent` as W3C Trace Context (level 1, §3.2) defines it, read by hand.
@Suite struct TraceParentTests {
    static let trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let parent = "00f067aa0ba902b7"
    static let valid = "00-\(trace)-\(parent)-01"

    @Test func aValidValueParsesAndFormatsBack() throws {
        let value = try #require(TraceParent(parsing: Self.valid))
        #expect(value.traceID == Self.trace)
        #expect(value.parentID == Self.parent)
        #expect(value.flags == 1 && value.sampled)
        #expect(value.headerValue == Self.valid)
        #expect(TraceParent(parsing: "  \(Self.valid)\t")?.headerValue == Self.valid, "optional whitespace around the value")
    }

    @Test func flagsAreKeptAndOnlyBitZeroMeansSampled() throws {
        let notSampled = try #require(TraceParent(parsing: "00-\(Self.trace)-\(Self.parent)-00"))
        #expect(!notSampled.sampled && notSampled.headerValue.hasSuffix("-00"))
        let more = try #require(TraceParent(parsing: "00-\(Self.trace)-\(Self.parent)-03"))
        #expect(more.sampled && more.flags == 3 && more.headerValue.hasSuffix("-03"))
        let high = try #require(TraceParent(parsing: "00-\(Self.trace)-\(Self.parent)-fe"))
        #expect(!high.sampled && high.headerValue.hasSuffix("-fe"))
        #expect(TraceParent(parsing: "00-\(Self.trace)-\(Self.parent)-0g") == nil)
    }

    @Test(arguments: [
        "ff-\(trace)-\(parent)-01",  // version ff is invalid
        "0g-\(trace)-\(parent)-01",  // not hex
        "0A-\(trace)-\(parent)-01",  // upper-case version
        "00-\(trace)-\(parent)-01-extra",  // version 00 has exactly four fields
        "00-\(trace)-\(parent)-01x",
        "01-\(trace)-\(parent)-01x",  // a later version's fifth field follows a dash
    ])
    func invalidVersions(value: String) {
        #expect(TraceParent(parsing: value) == nil, "\(value)")
    }

    @Test func aLaterVersionIsReadAsVersionZero() throws {
        let value = try #require(TraceParent(parsing: "cc-\(Self.trace)-\(Self.parent)-01-what-the-future-holds"))
        #expect(value.headerValue == Self.valid)
        #expect(TraceParent(parsing: "01-\(Self.trace)-\(Self.parent)-01")?.headerValue == Self.valid)
    }

    @Test(arguments: [
        "00-00000000000000000000000000000000-\(parent)-01",  // all-zero trace id
        "00-\(trace)-0000000000000000-01",  // all-zero parent id
        "00-\(trace.uppercased())-\(parent)-01",  // upper-case hex is rejected
        "00-\(trace)-\(parent.uppercased())-01",
        "00-\(trace)-\(parent)-0A",
        "00-\(trace.dropLast())-\(parent)-01",  // too short
        "00_\(trace)-\(parent)-01",  // wrong separator
        "00-\(trace)_\(parent)-01",
        "00-\(trace)-\(parent)_01",
        "00-\(trace.dropLast())z-\(parent)-01",
        "",
    ])
    func invalidFields(value: String) {
        #expect(TraceParent(parsing: value) == nil, "\(value)")
    }

    @Test func theFieldsAreCheckedWhenMadeToo() {
        #expect(TraceParent(traceID: Self.trace, parentID: Self.parent, flags: 1) != nil)
        #expect(TraceParent(traceID: String(repeating: "0", count: 32), parentID: Self.parent, flags: 1) == nil)
        #expect(TraceParent(traceID: Self.trace, parentID: "00F067AA0BA902B7", flags: 1) == nil)
        #expect(TraceParent(traceID: Self.trace, parentID: "00f067", flags: 1) == nil)
    }

    @Test func aRequestHasOneTraceparentOrNone() {
        var headers = RequestFields([("Traceparent", Self.valid)])
        #expect(TraceParent(headers: headers)?.traceID == Self.trace, "names are case-insensitive")
        headers.add(name: "traceparent", value: Self.valid)
        #expect(TraceParent(headers: headers) == nil, "two are invalid")
        #expect(TraceParent(headers: RequestFields()) == nil)
    }

    @Test func tracestateFieldsJoin() {
        let headers = RequestFields.lines(["tracestate": "a=1", "x": "y", "TraceState": "b=2"])
        #expect(TraceParent.traceState(in: headers) == "a=1,b=2")
        #expect(TraceParent.traceState(in: RequestFields([("tracestate", "")])) == nil)
    }

    @Test func theIncomingCarrierKeepsAValidTracestateOnly() throws {
        let valid = try #require(TraceCarrier.incoming(RequestFields([("traceparent", Self.valid), ("tracestate", "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")])))
        #expect(valid.traceparent == Self.valid)
        #expect(valid.tracestate == "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")
        let invalid = try #require(TraceCarrier.incoming(RequestFields([("traceparent", Self.valid), ("tracestate", "Bad Key=1")])))
        #expect(invalid.traceparent == Self.valid && invalid.tracestate == nil, "an invalid tracestate is dropped, the parent kept")
        #expect(TraceCarrier.incoming(RequestFields([("tracestate", "a=1")])) == nil, "no traceparent: a new trace")
        let later = try #require(TraceCarrier.incoming(RequestFields([("traceparent", "01-\(Self.trace)-\(Self.parent)-01-x")])))
        #expect(later.traceparent == Self.valid, "given to the tracer as version 00")
    }

    @Test func theCarrierReplacesTheFieldsOfTheNextHop() {
        var headers = RequestFields.lines(["Traceparent": Self.valid, "tracestate": "stale=1", "accept": "*/*"])
        TraceCarrier(traceparent: "00-\(Self.trace)-1111111111111111-01").write(to: &headers)
        #expect(headers["traceparent"] == ["00-\(Self.trace)-1111111111111111-01"])
        #expect(headers["tracestate"].isEmpty, "a tracestate the context does not carry goes")
        #expect(headers["accept"] == ["*/*"])
        TraceCarrier(traceparent: Self.valid, tracestate: "a=1").write(to: &headers)
        #expect(headers["traceparent"] == [Self.valid], "the field added for the last hop replaced too")
        #expect(headers["tracestate"] == ["a=1"])
        #expect(headers.count == 3)
        var untouched = RequestFields([("traceparent", Self.valid)])
        TraceCarrier().write(to: &untouched)
        #expect(untouched["traceparent"] == [Self.valid])
    }

    /// The ids as hex in place: leading zeros kept, every digit lowercase, the flags as two digits.
    @Test func idsAndTraceparentsAreWrittenInPlace() {
        let trace = TraceID(high: 0x4bf9_2f35_77b3_4da6, low: 0x0000_0000_0000_00af)
        #expect(trace.hex == "4bf92f3577b34da600000000000000af")
        #expect(SpanID(value: 0x00f0_67aa_0ba9_02b7).hex == Self.parent)
        #expect(SpanID(value: .max).hex == "ffffffffffffffff")
        #expect(HexID.traceparent(trace: TraceID(hex: Self.trace)!, span: SpanID(value: 0x00f0_67aa_0ba9_02b7), flags: 1) == Self.valid)
        for flags: UInt8 in [0, 1, 0x0a, 0xfe, 0xff] {
            let written = HexID.traceparent(trace: trace, span: SpanID(value: 1), flags: flags)
            #expect(written == "00-\(trace.hex)-0000000000000001-\(TraceParent.hex(flags))")
            #expect(TraceParent(parsing: written)?.flags == flags)
        }
    }
}
