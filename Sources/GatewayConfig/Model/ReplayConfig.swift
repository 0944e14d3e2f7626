/// `upstreams[i].replay`: responses served from a HAR file (the gateway's own
/// export, or one a browser saved) for the requests that match an entry, so an
/// app works offline from yesterday's traffic.
public struct ReplayConfig: Sendable, Equatable {
    public var enabled: Bool
    /// `har`: the file, absolute or relative to the config's directory.
    public var har: String
    /// `match`: what of a request must equal the entry's.
    public var match: Set<ReplayMatch>
    public var unmatched: UnmatchedMode
    /// `timing: recorded`: each response waits as long as the entry's `time`.
    public var recordedTiming: Bool

    public init(enabled: Bool = true, har: String, match: Set<ReplayMatch> = [.method, .path, .query], unmatched: UnmatchedMode = .pass, recordedTiming: Bool = false) {
        self.enabled = enabled
        self.har = har
        self.match = match
        self.unmatched = unmatched
        self.recordedTiming = recordedTiming
    }
}

/// `upstreams[i].record`: every exchange the upstream answers (over the
/// network: not a mock, a replayed entry or an injected fault) is written to a
/// HAR 1.2 file with its request and response bodies, secrets redacted as the
/// traces redact them, so that `replay` can serve it back offline.
public struct RecordConfig: Sendable, Equatable {
    public var enabled: Bool
    /// `har`: the file, absolute or relative to the config's directory; rewritten whole (atomically) as entries come.
    public var har: String

    public init(enabled: Bool = true, har: String) {
        self.enabled = enabled
        self.har = har
    }
}

/// One of `replay.match`: the parts of a request compared with a HAR entry's.
/// The host is always compared (without the port).
public enum ReplayMatch: String, Sendable, Equatable, CaseIterable {
    case method, path, query, body
}
