/// `Retry-After` (RFC 9110 §10.2.3): delta-seconds or an HTTP-date.
public enum RetryAfter {
    /// How long to wait from now. A date in the past means "now" (`.zero`).
    /// Nil when the value is neither form.
    ///
    /// - Parameter secondsSince1970: the current wall time, for the date form.
    public static func parse(_ value: some StringProtocol, secondsSince1970: Double) -> Duration? {
        let text = Substring(value).trimmingWhitespace()
        guard !text.isEmpty else { return nil }
        if text.allSatisfy({ $0 >= "0" && $0 <= "9" }) {
            // Absurdly large values are clamped to a year: the caller's max_wait refuses them anyway.
            guard text.count <= 9, let seconds = Int64(text) else { return .seconds(365 * 86_400) }
            return .seconds(seconds)
        }
        guard let date = HTTPDate.secondsSince1970(text) else { return nil }
        let delta = Double(date) - secondsSince1970
        return delta > 0 ? .milliseconds(Int64((delta * 1000).rounded(.up))) : .zero
    }

    /// The header value for a wait: whole seconds, rounded up, at least 1.
    public static func headerValue(for wait: Duration) -> String {
        let (seconds, attoseconds) = wait.components
        let rounded = seconds + (attoseconds > 0 ? 1 : 0)
        return String(Swift.max(1, rounded))
    }
}

extension Substring {
    /// The text without leading and trailing spaces and tabs (OWS).
    func trimmingWhitespace() -> Substring {
        let isWhitespace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isWhitespace($0) }), let last = lastIndex(where: { !isWhitespace($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
