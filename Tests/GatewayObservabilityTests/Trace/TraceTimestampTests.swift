import Foundation
import Testing

@testable import GatewayObservability

@Suite struct TraceTimestampTests {
    /// The hand-made formatter agrees with Foundation's ISO 8601 formatter.
    @Test(arguments: [0, 1_795_305_575.123, 1_795_305_575.9996, 951_782_400.5, 4_102_444_799.999])
    func matchesISO8601DateFormatter(_ seconds: Double) {
        let date = Date(timeIntervalSince1970: seconds)
        let reference = ISO8601DateFormatter()
        reference.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        reference.timeZone = TimeZone(identifier: "UTC")
        let ours = TraceRecord.timestamp(date)
        #expect(ours.count == 24)
        // Foundation rounds milliseconds; ours truncates: compare to the millisecond floor.
        let floored = Date(timeIntervalSince1970: (seconds * 1000).rounded(.down) / 1000)
        #expect(ours == reference.string(from: floored), "\(seconds)")
    }
}
