import Foundation

/// `/traces` on the admin port: the recent exchanges the page lists (newest
/// first), from the records the trace writer kept, so already redacted.
struct RecentExchangesReport: Encodable {
    struct Row: Encodable {
        let id: String
        let time: String
        let method: String
        let endpoint: String
        let upstream: String?
        let status: Int?
        let error: String?
        let attempts: Int
        let durationMs: Double
        let curl: String

        enum CodingKeys: String, CodingKey {
            case id, time, method, endpoint, upstream, status, error, attempts, curl
            case durationMs = "duration_ms"
        }
    }

    /// Whether the running config traces (`debug`); rows stay from before a reload turned it off.
    let debug: Bool
    /// Most rows kept.
    let capacity: Int
    let exchanges: [Row]

    init(debug: Bool, recent: RecentTraces) {
        self.debug = debug
        capacity = recent.capacity
        exchanges = recent.items.reversed().map { item in
            let r = item.record
            return Row(
                id: r.id, time: r.time, method: r.method, endpoint: r.endpoint, upstream: r.upstream, status: r.status,
                error: r.error, attempts: r.attempts.count, durationMs: HARTimings.milliseconds(r.duration), curl: r.curl
            )
        }
    }

    func json() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return ((try? encoder.encode(self)).map(Array.init) ?? Array("{}".utf8)) + [UInt8(ascii: "\n")]
    }
}
