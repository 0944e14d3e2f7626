import ArgumentParser
import Foundation
import GatewayConfig
import GatewayCore
import GatewayObservability

/// Which trace records an export takes: started within `since` of now, of
/// `upstream`, with one of `ids` (each only when given).
struct TraceSelection {
    let notBefore: Date?
    let upstream: String?
    let ids: Set<String>
    /// Reads the records' `time` (ISO 8601 with milliseconds).
    private let parser = ISO8601DateFormatter()

    init(since: String?, upstream: String?, ids: [String], now: Date = Date()) throws {
        if let since {
            guard let duration = ConfigUnits.parseDuration(since) else {
                throw ValidationError("--since: \"\(since)\" is not a duration (250ms, 10s, 5m, 2h)")
            }
            notBefore = now.addingTimeInterval(-duration.seconds)
        } else {
            notBefore = nil
        }
        self.upstream = upstream
        self.ids = Set(ids)
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    }

    func matches(_ record: TraceRecord) -> Bool {
        if !ids.isEmpty, !ids.contains(record.id) { return false }
        if let upstream, record.upstream != upstream { return false }
        if let notBefore {
            guard let started = parser.date(from: record.time) else { return false }
            return started >= notBefore
        }
        return true
    }
}
