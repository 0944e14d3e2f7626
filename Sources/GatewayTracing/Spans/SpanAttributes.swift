/// One attribute's value, as OTLP's `AnyValue` carries it: the four kinds the
/// gateway's spans use.
enum SpanAttribute: Sendable, Equatable, CustomStringConvertible {
    case string(String)
    case int64(Int64)
    case bool(Bool)
    case double(Double)

    var description: String {
        switch self {
        case .string(let value): value
        case .int64(let value): String(value)
        case .bool(let value): String(value)
        case .double(let value): String(value)
        }
    }
}

/// A span's (or an event's) attributes, in the order they were first set: a
/// small array, as a span has a dozen at most. Setting a key again replaces
/// its value in place.
struct SpanAttributes: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    private(set) var pairs: [(key: String, value: SpanAttribute)]

    init() {
        pairs = []
    }

    /// Room for `capacity` attributes: a span's are counted before they are set (no growth).
    init(capacity: Int) {
        pairs = []
        pairs.reserveCapacity(capacity)
    }

    init(dictionaryLiteral elements: (String, SpanAttribute)...) {
        pairs = []
        for (key, value) in elements { set(key, value: value) }
    }

    var isEmpty: Bool { pairs.isEmpty }

    var count: Int { pairs.count }

    /// Sets `key` to `value`, replacing an earlier value.
    mutating func set(_ key: String, value: SpanAttribute) {
        if let index = pairs.firstIndex(where: { $0.key == key }) {
            pairs[index].value = value
        } else {
            pairs.append((key, value))
        }
    }

    /// Adds `key`, which is not set yet (the plan's keys, each set once):
    /// ``set(_:value:)`` without its search.
    mutating func append(_ key: String, _ value: SpanAttribute) {
        assert(!pairs.contains { $0.key == key }, "\(key) set twice")
        pairs.append((key, value))
    }

    /// The value of `key`, or nil.
    func get(_ key: String) -> SpanAttribute? {
        pairs.first { $0.key == key }?.value
    }

    /// Every attribute of `other` set here (its values win).
    mutating func merge(_ other: SpanAttributes) {
        for (key, value) in other.pairs { set(key, value: value) }
    }

    func forEach(_ body: (String, SpanAttribute) throws -> Void) rethrows {
        for (key, value) in pairs { try body(key, value) }
    }

    static func == (lhs: SpanAttributes, rhs: SpanAttributes) -> Bool {
        lhs.pairs.count == rhs.pairs.count && zip(lhs.pairs, rhs.pairs).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}

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
