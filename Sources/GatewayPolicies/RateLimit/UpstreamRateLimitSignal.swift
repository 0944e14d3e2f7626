public import NIOHTTP1

/// What an upstream's response says about its rate limit, from one of three
/// header families (the first present wins, in this order):
///
/// 1. `RateLimit` (IETF draft `draft-ietf-httpapi-ratelimit-headers`), either as
///    the earlier dictionary `RateLimit: limit=100, remaining=0, reset=30` or as
///    the later item list `RateLimit: "default";r=0;t=30` (quota from
///    `RateLimit-Policy: "default";q=100;w=60`); with several items the one with
///    the fewest remaining requests counts.
/// 2. `RateLimit-Limit` / `RateLimit-Remaining` / `RateLimit-Reset` (earlier
///    drafts); list values (`100, 100;w=60`) use their first member.
/// 3. `X-RateLimit-Limit` / `X-RateLimit-Remaining` / `X-RateLimit-Reset`.
///
/// Resets are delta seconds, except `X-RateLimit-Reset` values above 10⁹,
/// which are epoch seconds (GitHub), and above 10¹², epoch milliseconds.
public struct UpstreamRateLimitSignal: Sendable, Equatable {
    public enum Family: String, Sendable {
        case rateLimit = "RateLimit"
        case rateLimitFields = "RateLimit-*"
        case xRateLimit = "X-RateLimit-*"
    }

    public var family: Family
    public var limit: Int?
    public var remaining: Int?
    /// Time from now until the quota resets.
    public var reset: Duration?

    public init(family: Family, limit: Int? = nil, remaining: Int? = nil, reset: Duration? = nil) {
        self.family = family
        self.limit = limit
        self.remaining = remaining
        self.reset = reset
    }

    /// How long further requests should be held back: until the reset once
    /// nothing remains; nil while requests remain (or no reset is known).
    public var hold: Duration? {
        guard let remaining, remaining <= 0, let reset, reset > .zero else { return nil }
        return reset
    }

    /// The signal in `headers`, nil when none of the families is present.
    public static func parse(_ headers: HTTPHeaders, secondsSince1970: Double) -> UpstreamRateLimitSignal? {
        if let value = joined(headers, "RateLimit"), let signal = parseStructured(value, policy: joined(headers, "RateLimit-Policy")) {
            return signal
        }
        if let signal = parseFields(headers, prefix: "RateLimit-", family: .rateLimitFields, secondsSince1970: nil) {
            return signal
        }
        return parseFields(headers, prefix: "X-RateLimit-", family: .xRateLimit, secondsSince1970: secondsSince1970)
    }

    private static func joined(_ headers: HTTPHeaders, _ name: String) -> String? {
        let values = headers[name]
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// `limit=100, remaining=0, reset=30` or `"default";r=0;t=30, "burst";r=5;t=1`.
    static func parseStructured(_ value: String, policy: String?) -> UpstreamRateLimitSignal? {
        var dictionary = UpstreamRateLimitSignal(family: .rateLimit)
        var best: (remaining: Int, reset: Duration?, name: Substring)?
        for member in value.split(separator: ",").map({ Substring($0).trimmingWhitespace() }) where !member.isEmpty {
            let parts = member.split(separator: ";").map { Substring($0).trimmingWhitespace() }
            guard let head = parts.first else { continue }
            if let (key, raw) = keyValue(head), ["limit", "remaining", "reset"].contains(key) {
                switch key {
                case "limit": dictionary.limit = integer(raw)
                case "remaining": dictionary.remaining = integer(raw)
                default: dictionary.reset = seconds(raw)
                }
                continue
            }
            var remaining: Int?
            var reset: Duration?
            for parameter in parts.dropFirst() {
                guard let (key, raw) = keyValue(parameter) else { continue }
                if key == "r" { remaining = integer(raw) }
                if key == "t" { reset = seconds(raw) }
            }
            if let remaining, best == nil || remaining < best!.remaining {
                best = (remaining, reset, head)
            }
        }
        if let best {
            var signal = UpstreamRateLimitSignal(family: .rateLimit, remaining: best.remaining, reset: best.reset)
            signal.limit = policy.flatMap { quota(in: $0, named: best.name) }
            return signal
        }
        return dictionary.remaining == nil && dictionary.reset == nil && dictionary.limit == nil ? nil : dictionary
    }

    /// `q` of the policy item named `name` in `RateLimit-Policy`.
    private static func quota(in policy: String, named name: Substring) -> Int? {
        for member in policy.split(separator: ",") {
            let parts = member.split(separator: ";").map { Substring($0).trimmingWhitespace() }
            guard parts.first == name else { continue }
            for parameter in parts.dropFirst() {
                if let (key, raw) = keyValue(parameter), key == "q" { return integer(raw) }
            }
        }
        return nil
    }

    private static func parseFields(_ headers: HTTPHeaders, prefix: String, family: Family, secondsSince1970: Double?) -> UpstreamRateLimitSignal? {
        func first(_ suffix: String) -> Substring? {
            guard let value = headers.first(name: prefix + suffix) else { return nil }
            let member = value.split(separator: ",").first.map { Substring($0) } ?? Substring(value)
            return (member.split(separator: ";").first.map { Substring($0) } ?? member).trimmingWhitespace()
        }
        let limit = first("Limit").flatMap(integer)
        let remaining = first("Remaining").flatMap(integer)
        var reset: Duration?
        if let raw = first("Reset"), let value = Double(raw), value.isFinite, value >= 0 {
            if let now = secondsSince1970, value > 1e9 {
                let epochSeconds = value > 1e12 ? value / 1000 : value
                reset = seconds(Swift.max(0, epochSeconds - now))
            } else {
                reset = seconds(raw)
            }
        }
        guard limit != nil || remaining != nil || reset != nil else { return nil }
        return UpstreamRateLimitSignal(family: family, limit: limit, remaining: remaining, reset: reset)
    }

    private static func keyValue(_ text: Substring) -> (String, Substring)? {
        guard let equals = text.firstIndex(of: "=") else { return nil }
        let key = text[..<equals].trimmingWhitespace().lowercased()
        let value = text[text.index(after: equals)...].trimmingWhitespace()
        return (key, value)
    }

    private static func integer(_ text: Substring) -> Int? {
        Int(text.trimmingWhitespace())
    }

    /// Non-negative (fractional) seconds, capped at a year.
    private static func seconds(_ text: Substring) -> Duration? {
        guard let value = Double(text.trimmingWhitespace()), value.isFinite, value >= 0 else { return nil }
        return seconds(value)
    }

    private static func seconds(_ value: Double) -> Duration {
        .milliseconds(Int64((Swift.min(value, 365 * 86_400) * 1000).rounded(.up)))
    }
}
