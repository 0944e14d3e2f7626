/// A HAR 1.2 document (http://www.softwareishard.com/blog/har-12-spec/) as the
/// trace export writes it: no pages, one entry per exchange, the gateway's own
/// fields prefixed with `_` as the spec allows for custom fields.
public struct HARLog: Sendable, Codable, Equatable {
    public var log: Log

    public struct Log: Sendable, Codable, Equatable {
        public var version = "1.2"
        public var creator: Creator
        public var entries: [Entry]
    }

    public struct Creator: Sendable, Codable, Equatable {
        public var name: String
        public var version: String
    }

    public struct NameValue: Sendable, Codable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public struct Entry: Sendable, Codable, Equatable {
        public var startedDateTime: String
        /// Milliseconds: the sum of the `timings` that apply (not -1).
        public var time: Double
        public var request: Request
        public var response: Response
        public var cache = Cache()
        public var timings: HARTimings
        /// The trace record's id (`gateway trace show ID`).
        public var _id: String
        public var _upstream: String?
        /// Every upstream attempt in order; the last one's response is the entry's.
        public var _attempts: [Attempt]
        /// The gateway's error code when the exchange failed (`upstream_timeout`, ...).
        public var _gatewayError: String?
        /// The exchange's distributed trace (tracing on): its trace id in Jaeger or Tempo.
        public var _traceId: String? = nil
        /// The response was made by the gateway (a mock, a replayed entry, an injected fault): `mock`, `fault:error`...
        public var _injected: String? = nil
    }

    public struct Request: Sendable, Codable, Equatable {
        public var method: String
        public var url: String
        public var httpVersion = "HTTP/1.1"
        public var cookies: [NameValue] = []
        public var headers: [NameValue]
        public var queryString: [NameValue]
        public var postData: PostData?
        public var headersSize = -1
        public var bodySize: Int
    }

    public struct PostData: Sendable, Codable, Equatable {
        public var mimeType: String
        public var text: String
        /// `base64` when `text` holds a binary body base64-encoded.
        public var encoding: String?
        public var comment: String?

        public init(mimeType: String, text: String, encoding: String? = nil, comment: String? = nil) {
            self.mimeType = mimeType
            self.text = text
            self.encoding = encoding
            self.comment = comment
        }
    }

    public struct Response: Sendable, Codable, Equatable {
        /// 0 when the client got no response head.
        public var status: Int
        public var statusText: String
        public var httpVersion = "HTTP/1.1"
        public var cookies: [NameValue] = []
        public var headers: [NameValue]
        public var content: Content
        public var redirectURL: String
        public var headersSize = -1
        public var bodySize: Int
    }

    /// The response body: its size, and in a recording (`record:`) its text
    /// (base64 when `encoding` says so); a trace's export has no text.
    public struct Content: Sendable, Codable, Equatable {
        public var size: Int
        public var mimeType: String
        public var text: String? = nil
        public var encoding: String? = nil
        public var comment: String? = nil
        /// The text is the body as sent under the response's `Content-Encoding`
        /// (gzip...), not decoded: replay sends it with that field.
        public var _contentEncoded: Bool? = nil
    }

    public struct Cache: Sendable, Codable, Equatable {}

    /// One upstream attempt, phases in milliseconds (absent when they did not happen).
    public struct Attempt: Sendable, Codable, Equatable {
        public var status: Int?
        public var error: String?
        public var reusedConnection: Bool
        public var connect: Double?
        public var ssl: Double?
        public var ttfb: Double?
        public var total: Double?
    }
}
