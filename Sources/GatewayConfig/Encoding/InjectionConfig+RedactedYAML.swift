/// `faults`, `mocks`, `replay` and `record` in `redactedYAML()` (they hold no secrets):
/// written so that the dump loads back to the same config.
extension UpstreamConfig {
    func writeInjection(to out: inout YAMLLines) {
        if let faults {
            out.key("faults")
            out.indented { out in faults.write(to: &out) }
        }
        if let mocks {
            out.key("mocks")
            out.indented { out in mocks.write(to: &out) }
        }
        if let replay {
            out.key("replay")
            out.indented { out in
                out.plain("enabled", String(replay.enabled))
                out.scalar("har", replay.har)
                out.flow("match", ReplayMatch.allCases.filter(replay.match.contains).map(\.rawValue))
                out.plain("unmatched", replay.unmatched.rawValue)
                out.plain("timing", replay.recordedTiming ? "recorded" : "none")
            }
        }
        if let record {
            out.key("record")
            out.indented { out in
                out.plain("enabled", String(record.enabled))
                out.scalar("har", record.har)
            }
        }
    }
}

extension FaultsConfig {
    fileprivate func write(to out: inout YAMLLines) {
        out.plain("enabled", String(enabled))
        if let seed { out.plain("seed", String(seed)) }
        guard !rules.isEmpty else { return }
        out.key("rules")
        for rule in rules {
            out.listItem { out in
                out.plain("toward", rule.toward.rawValue)
                if let endpoint = rule.endpoint { out.scalar("endpoint", endpoint.description) }
                if let every = rule.every { out.plain("every", String(every)) } else { out.plain("rate", String(rule.rate)) }
                switch rule.action {
                case .error(let response):
                    out.key("error")
                    out.indented { out in
                        out.plain("status", String(response.status))
                        if let retryAfter = response.retryAfter { out.plain("retry_after", ConfigUnits.formatDuration(retryAfter)) }
                        writeHeaders("headers", response.headers, to: &out)
                        if let body = response.body { out.scalar("body", body) }
                    }
                case .latency(let low, let high):
                    out.key("latency")
                    out.indented { out in
                        out.plain("min", ConfigUnits.formatDuration(low))
                        out.plain("max", ConfigUnits.formatDuration(high))
                    }
                case .reset:
                    out.plain("reset", "true")
                case .resetMidBody(let after):
                    out.key("reset")
                    out.indented { out in out.plain("after", String(after)) }
                case .slowBody(let perSecond):
                    out.key("slow_body")
                    out.indented { out in out.plain("bytes_per_second", String(perSecond)) }
                }
            }
        }
    }
}

extension MocksConfig {
    fileprivate func write(to out: inout YAMLLines) {
        out.plain("enabled", String(enabled))
        out.plain("unmatched", unmatched.rawValue)
        guard !rules.isEmpty else { return }
        out.key("rules")
        for rule in rules {
            out.listItem { out in
                out.scalar("endpoint", rule.endpoint.description)
                writeHeaders("query", rule.query, to: &out)
                writeHeaders("headers", rule.headers, to: &out)
                if !rule.bodyContains.isEmpty { out.list("body_contains", rule.bodyContains) }
                if let nth = rule.nth { out.plain("nth", String(nth)) }
                out.key("response")
                out.indented { out in
                    let response = rule.response
                    out.plain("status", String(response.status))
                    writeHeaders("headers", response.headers, to: &out)
                    switch response.body {
                    case .inline(let text): out.scalar("body", text)
                    case .file(let path): out.scalar("file", path)
                    }
                    out.plain("template", String(response.template))
                    if let delay = response.delay { out.plain("delay", ConfigUnits.formatDuration(delay)) }
                }
            }
        }
    }
}

private func writeHeaders(_ key: String, _ headers: [MockHeader], to out: inout YAMLLines) {
    guard !headers.isEmpty else { return }
    out.key(key)
    out.indented { out in
        for header in headers { out.scalar(YAMLLines.quoted(header.name), header.value) }
    }
}
