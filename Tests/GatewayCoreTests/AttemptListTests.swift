import GatewayCore
import Testing

/// The attempts of an exchange: the first inline, the rest in order after it.
struct AttemptListTests {
    static func attempt(_ status: Int) -> AttemptTimings {
        var timings = AttemptTimings(started: .now)
        timings.status = status
        return timings
    }

    @Test func keepsAttemptsInOrderAndUpdatesByIndex() {
        var list = AttemptList()
        #expect(list.isEmpty)
        for status in [503, 502, 200] { list.append(Self.attempt(status)) }
        #expect(list.map(\.status) == [503, 502, 200])
        list[0].status = 429
        list[2].status = 201
        #expect(list.map(\.status) == [429, 502, 201])
        #expect(AttemptList([Self.attempt(1), Self.attempt(2)]).map(\.status) == [1, 2])
        list.update(0) { $0.status = 500 }
        list.update(1) { $0.reusedConnection = true }
        #expect(list.map(\.status) == [500, 502, 201])
        #expect(list.map(\.reusedConnection) == [false, true, false])
        #expect(list.count == 3)
        #expect(AttemptList().count == 0)
        #expect(AttemptList([]).isEmpty)
    }

    /// Read in place: every attempt in order, and the last one's protocol, for lists of any length.
    @Test(arguments: [0, 1, 2, 4])
    func eachAttemptAndTheLastProtocolAreReadInPlace(_ count: Int) {
        var list = AttemptList()
        for index in 0..<count {
            var attempt = Self.attempt(200 + index)
            attempt.wireVersion = index.isMultiple(of: 2) ? .http1 : .http2
            list.append(attempt)
        }
        var seen: [Int?] = []
        list.forEachAttempt { seen.append($0.status) }
        #expect(seen == list.map(\.status))
        #expect(list.lastWireVersion == list.last?.wireVersion)
    }

    @Test func aRecordIndexesEachAttemptItBegan() {
        let record = ExchangeRecord()
        let first = record.beginAttempt(Self.attempt(503))
        let second = record.beginAttempt(Self.attempt(0))
        record.updateAttempt(second) { $0.status = 200 }
        record.updateAttempt(7) { $0.status = 1 }  // unknown: ignored
        #expect((first, second) == (0, 1))
        #expect(record.attempts.map(\.status) == [503, 200])
    }
}
