/// Parses an HTTP-date (RFC 9110 §5.6.7) into seconds since 1970 (UTC).
///
/// Accepts the preferred IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and the
/// two obsolete forms recipients must accept: RFC 850 (`Sunday, 06-Nov-94
/// 08:49:37 GMT`, a two-digit year below 70 meaning 20yy) and asctime
/// (`Sun Nov  6 08:49:37 1994`). No Foundation formatter, no locale.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    static func secondsSince1970(_ text: some StringProtocol) -> Int64? {
        var rest = Substring(text).drop(while: { $0 == " " || $0 == "\t" })
        // Drop the day name: up to the first comma (IMF-fixdate, RFC 850) or space (asctime).
        guard let weekdayEnd = rest.firstIndex(where: { $0 == "," || $0 == " " }) else { return nil }
        guard rest[..<weekdayEnd].allSatisfy(\.isLetter) else { return nil }
        rest = rest[rest.index(after: weekdayEnd)...]
        let tokens = rest.split(whereSeparator: { $0 == " " || $0 == "-" || $0 == "\t" })

        let day: Int, month: Int, year: Int, time: Substring
        if tokens.count == 4, let m = monthNumber(tokens[0]) {
            // asctime: Nov 6 08:49:37 1994
            guard let d = Int(tokens[1]), let y = Int(tokens[3]), tokens[3].count == 4 else { return nil }
            (day, month, year, time) = (d, m, y, tokens[2])
        } else if tokens.count == 5, tokens[4].uppercased() == "GMT", let m = monthNumber(tokens[1]), let d = Int(tokens[0]) {
            guard let y = Int(tokens[2]) else { return nil }
            switch tokens[2].count {
            case 4: year = y
            case 2: year = y < 70 ? 2000 + y : 1900 + y
            default: return nil
            }
            (day, month, time) = (d, m, tokens[3])
        } else {
            return nil
        }
        let clock = time.split(separator: ":")
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
            let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second),
            (1...31).contains(day), (1...9999).contains(year)
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    private static func monthNumber(_ token: Substring) -> Int? {
        guard token.count == 3, let index = months.firstIndex(of: token.lowercased()) else { return nil }
        return index + 1
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
