/// A strict reader of the Prometheus text format 0.0.4, for when promtool is
/// not installed: every line is a comment, HELP, TYPE or a well-formed sample;
/// each family is announced once, before its samples, and its samples are
/// contiguous; histogram buckets are cumulative and end with `+Inf` = `_count`.
enum PrometheusTextChecker {
    static func check(_ text: String) -> [String] {
        var problems: [String] = []
        var types: [String: String] = [:]
        var helps = Set<String>()
        var finishedFamilies = Set<String>()
        var currentFamily: String?
        var buckets: [String: [(le: Double, count: Double)]] = [:]
        var counts: [String: Double] = [:]
        var seriesSeen = Set<String>()
        guard text.hasSuffix("\n") else { return ["the exposition must end with a newline"] }

        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
                guard parts.count >= 3, isMetricName(parts[2]) else { problems.append("bad metadata: \(line)"); continue }
                let name = String(parts[2])
                if line.hasPrefix("# HELP ") {
                    if !helps.insert(name).inserted { problems.append("HELP twice for \(name)") }
                } else {
                    guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3]) else {
                        problems.append("bad TYPE: \(line)"); continue
                    }
                    if types[name] != nil { problems.append("TYPE twice for \(name)") }
                    types[name] = String(parts[3])
                }
                if currentFamily != name, let current = currentFamily { finishedFamilies.insert(current) }
                if finishedFamilies.contains(name) { problems.append("\(name) is not contiguous") }
                currentFamily = name
                continue
            }
            if line.hasPrefix("#") || line.isEmpty { continue }
            guard let (name, labels, value) = parseSample(line) else { problems.append("bad sample: \(line)"); continue }
            var family = name
            let type = types[name]
            if type == nil {
                for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
                    let base = String(name.dropLast(suffix.count))
                    if types[base] == "histogram" { family = base }
                }
            }
            guard let familyType = types[family] else { problems.append("sample before TYPE: \(line)"); continue }
            if family != currentFamily { problems.append("sample of \(family) outside its family block") }
            if familyType == "counter" && value < 0 { problems.append("negative counter: \(line)") }
            if familyType == "counter" && !name.hasSuffix("_total") { problems.append("counter without _total: \(name)") }
            let seriesKey = name + "{" + labels.map { "\($0.0)=\($0.1)" }.joined(separator: ",") + "}"
            if !seriesSeen.insert(seriesKey).inserted { problems.append("duplicate series: \(seriesKey)") }
            if familyType == "histogram" {
                let rest = labels.filter { $0.0 != "le" }.map { "\($0.0)=\($0.1)" }.joined(separator: ",")
                if name.hasSuffix("_bucket") {
                    guard let le = labels.first(where: { $0.0 == "le" })?.1 else { problems.append("bucket without le: \(line)"); continue }
                    let bound = le == "+Inf" ? Double.infinity : Double(le)
                    guard let bound else { problems.append("bad le: \(line)"); continue }
                    buckets[family + "{" + rest + "}", default: []].append((bound, value))
                } else if name.hasSuffix("_count") {
                    counts[family + "{" + rest + "}"] = value
                }
            }
        }
        for (series, list) in buckets {
            if list.last?.le != .infinity { problems.append("\(series): the last bucket must be +Inf") }
            for (a, b) in zip(list, list.dropFirst()) where !(a.le < b.le && a.count <= b.count) {
                problems.append("\(series): buckets must be increasing and cumulative")
            }
            if let count = counts[series], count != list.last?.count { problems.append("\(series): +Inf bucket != _count") }
        }
        return problems
    }

    static func isMetricName(_ name: Substring) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == ":" }
    }

    /// `name{a="x",b="y"} value`: name, labels (values unescaped), value.
    static func parseSample(_ line: Substring) -> (String, [(String, String)], Double)? {
        var index = line.startIndex
        while index < line.endIndex, line[index] != "{", line[index] != " " { index = line.index(after: index) }
        let name = line[line.startIndex..<index]
        guard isMetricName(name), index < line.endIndex else { return nil }
        var labels: [(String, String)] = []
        if line[index] == "{" {
            index = line.index(after: index)
            while index < line.endIndex, line[index] != "}" {
                var labelEnd = index
                while labelEnd < line.endIndex, line[labelEnd] != "=" { labelEnd = line.index(after: labelEnd) }
                let label = line[index..<labelEnd]
                guard isMetricName(label), !label.contains(":"), labelEnd < line.endIndex else { return nil }
                var cursor = line.index(after: labelEnd)
                guard cursor < line.endIndex, line[cursor] == "\"" else { return nil }
                cursor = line.index(after: cursor)
                var value = ""
                while cursor < line.endIndex, line[cursor] != "\"" {
                    if line[cursor] == "\\" {
                        cursor = line.index(after: cursor)
                        guard cursor < line.endIndex else { return nil }
                        switch line[cursor] {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: return nil
                        }
                    } else {
                        value.append(line[cursor])
                    }
                    cursor = line.index(after: cursor)
                }
                guard cursor < line.endIndex else { return nil }
                if labels.contains(where: { $0.0 == label }) { return nil }
                labels.append((String(label), value))
                cursor = line.index(after: cursor)
                if cursor < line.endIndex, line[cursor] == "," { cursor = line.index(after: cursor) }
                index = cursor
            }
            guard index < line.endIndex else { return nil }
            index = line.index(after: index)
        }
        guard index < line.endIndex, line[index] == " " else { return nil }
        let rest = line[line.index(after: index)...].split(separator: " ")
        guard rest.count == 1 || rest.count == 2 else { return nil }
        let valueText = rest[0]
        let value: Double? = switch valueText {
        case "+Inf": .infinity
        case "-Inf": -.infinity
        case "NaN": .nan
        default: Double(valueText)
        }
        guard let value else { return nil }
        if rest.count == 2, Int64(rest[1]) == nil { return nil }
        return (String(name), labels, value)
    }
}
