import Foundation

/// Parsing and formatting of the config's durations and sizes.
///
/// Durations: an integer followed by `ms`, `s`, `m` or `h` (`250ms`, `10s`,
/// `2m`, `1h`), or a bare integer meaning seconds.
/// Sizes: an integer followed by `B`, `KB`/`MB`/`GB` (powers of 1000) or
/// `KiB`/`MiB`/`GiB` (powers of 1024), or a bare integer meaning bytes.
/// Units are case-sensitive; a space between number and unit is allowed.
public enum ConfigUnits {
    static let durationUnits: [(suffix: String, milliseconds: Int64)] = [
        ("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000),
    ]

    static let sizeUnits: [(suffix: String, bytes: Int)] = [
        ("B", 1),
        ("KB", 1000), ("MB", 1000 * 1000), ("GB", 1000 * 1000 * 1000),
        ("KiB", 1024), ("MiB", 1024 * 1024), ("GiB", 1024 * 1024 * 1024),
    ]

    /// `250ms`, `10s`, `2m`, `1h`, or a bare integer (seconds); nil otherwise.
    public static func parseDuration(_ text: String) -> Duration? {
        guard let (number, unit) = split(text) else { return nil }
        let multiplier: Int64
        if unit.isEmpty {
            multiplier = 1000
        } else if let match = durationUnits.first(where: { $0.suffix == unit }) {
            multiplier = match.milliseconds
        } else {
            return nil
        }
        guard let value = Int64(number) else { return nil }
        let (milliseconds, overflow) = value.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { return nil }
        return .milliseconds(milliseconds)
    }

    static func parseSize(_ text: String) -> Int? {
        guard let (number, unit) = split(text) else { return nil }
        let multiplier: Int
        if unit.isEmpty {
            multiplier = 1
        } else if let match = sizeUnits.first(where: { $0.suffix == unit }) {
            multiplier = match.bytes
        } else {
            return nil
        }
        guard let value = Int(number) else { return nil }
        let (bytes, overflow) = value.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : bytes
    }

    /// The shortest exact form: `1h`, `2m`, `10s`, `250ms`. Sub-millisecond
    /// parts (never produced by parsing) are rounded up to the next millisecond.
    public static func formatDuration(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        var milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        if attoseconds % 1_000_000_000_000_000 > 0 { milliseconds += 1 }
        if milliseconds != 0 {
            for unit in durationUnits.reversed() where milliseconds % unit.milliseconds == 0 {
                return "\(milliseconds / unit.milliseconds)\(unit.suffix)"
            }
        }
        return "\(milliseconds)ms"
    }

    /// `20`, `2.5`: integral values without a fraction, others in Swift's
    /// shortest round-tripping form.
    public static func formatNumber(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        let text = String(value)
        guard value.isFinite, text.contains("e") else { return text }
        // No exponent notation: the config's number syntax has none.
        var fixed = String(format: "%.17f", value)
        while fixed.hasSuffix("0") { fixed.removeLast() }
        return fixed
    }

    /// `32KiB`, `1MiB`, `32KB`, or plain bytes when no unit divides exactly.
    static func formatSize(_ bytes: Int) -> String {
        guard bytes != 0 else { return "0" }
        let preferred = sizeUnits.filter { $0.bytes > 1 }.sorted { $0.bytes > $1.bytes }
        for unit in preferred where bytes % unit.bytes == 0 {
            return "\(bytes / unit.bytes)\(unit.suffix)"
        }
        return "\(bytes)"
    }

    /// Splits `"32 KiB"` into `("32", "KiB")`. The number is ASCII digits
    /// only: no sign, no fraction, no exponent.
    private static func split(_ text: String) -> (number: Substring, unit: Substring)? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix(while: \.isASCIIDigit)
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        let unit = trimmed[digits.endIndex...].drop(while: { $0 == " " })
        return (digits, unit)
    }
}
