/// `trace`: debug traces, one JSON Lines record per exchange, written while
/// `debug` is on. Secrets are replaced by placeholders unless `redact` is false.
public struct TraceConfig: Sendable, Equatable {
    /// `file`: the trace file, rotated by size. Kept as written (a relative
    /// path is relative to the working directory, like `state_dir`); default
    /// `<state_dir>/trace.jsonl`.
    public var file: String
    /// `max_file_size`: rotate when the file would exceed this; >= 1KiB.
    public var maxFileBytes: Int
    /// `max_files`: rotated files kept (`trace.jsonl.1` ...), >= 1.
    public var maxFiles: Int
    /// `redact`: replace secrets with placeholders. `false` is for local
    /// debugging only, and produces a warning.
    public var redact: Bool
    /// `redact_headers`: header names redacted in addition to `builtInRedactHeaders`.
    public var redactHeaders: [String]
    /// `redact_query`: query parameters redacted in addition to `builtInRedactQuery`.
    public var redactQuery: [String]
    /// `redact_json_fields`: JSON body fields redacted in addition to `builtInRedactJSONFields`.
    public var redactJSONFields: [String]
    /// `buffer`: records queued for the writer; when full, records are dropped (and counted).
    public var bufferRecords: Int

    public static let defaultFileName = "trace.jsonl"
    public static let defaultMaxFileBytes = 10 * 1024 * 1024
    public static let defaultMaxFiles = 5
    public static let defaultBufferRecords = 1024
    public static let minFileBytes = 1024

    /// Always redacted, whatever the config adds (compare case-insensitively):
    /// the standard credential headers, and the token headers of common APIs
    /// (OpenStack, GitLab, AWS session credentials).
    public static let builtInRedactHeaders = [
        "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-API-Key",
        "X-Auth-Token", "Private-Token", "X-Amz-Security-Token",
    ]
    /// Token parameters, the OAuth2 client secret and authorization code.
    public static let builtInRedactQuery = ["access_token", "api_key", "token", "client_secret", "code"]
    public static let builtInRedactJSONFields = ["password", "client_secret", "refresh_token", "access_token"]

    /// `<stateDir>/trace.jsonl`.
    public static func defaultFile(stateDir: String) -> String {
        stateDir.hasSuffix("/") ? stateDir + defaultFileName : "\(stateDir)/\(defaultFileName)"
    }

    public init(
        file: String = TraceConfig.defaultFile(stateDir: GatewayConfig.defaultStateDir),
        maxFileBytes: Int = TraceConfig.defaultMaxFileBytes,
        maxFiles: Int = TraceConfig.defaultMaxFiles,
        redact: Bool = true,
        redactHeaders: [String] = [],
        redactQuery: [String] = [],
        redactJSONFields: [String] = [],
        bufferRecords: Int = TraceConfig.defaultBufferRecords
    ) {
        self.file = file
        self.maxFileBytes = maxFileBytes
        self.maxFiles = maxFiles
        self.redact = redact
        self.redactHeaders = redactHeaders
        self.redactQuery = redactQuery
        self.redactJSONFields = redactJSONFields
        self.bufferRecords = bufferRecords
    }

    /// Defaults, with the file under `stateDir`.
    public init(stateDir: String) {
        self.init(file: TraceConfig.defaultFile(stateDir: stateDir))
    }
}
