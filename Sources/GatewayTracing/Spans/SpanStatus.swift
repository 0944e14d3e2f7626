/// A span's status as OTLP's `Status`: unset (no status), ok or error with a message.
struct SpanStatus: Sendable, Equatable {
    enum Code: Sendable, Equatable {
        case ok
        case error

        /// `Status.StatusCode`: `STATUS_CODE_OK` 1, `STATUS_CODE_ERROR` 2.
        var protobufValue: UInt64 {
            switch self {
            case .ok: 1
            case .error: 2
            }
        }
    }

    var code: Code
    var message: String?

    init(code: Code, message: String? = nil) {
        self.code = code
        self.message = message
    }
}
