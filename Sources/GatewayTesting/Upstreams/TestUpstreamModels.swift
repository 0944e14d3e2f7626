import Foundation

/// One request as the ``TestUpstream`` received it.
///
/// `headers` keeps the exact received order, duplicates included, as `[name, value]` pairs.
/// `body` is only recorded for the `/echo` and `/custom` routes (never for `/upload` or `/bytes`,
/// whose bodies may be arbitrarily large).
public struct RecordedRequest: Sendable, Codable, Equatable {
    public var method: String
    /// The request target exactly as on the request line (origin-form, absolute-form, ...).
    public var target: String
    /// `[[name, value]]` in received order.
    public var headers: [[String]]
    public var body: [UInt8]

    public init(method: String, target: String, headers: [[String]], body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }

    /// The path part of ``target`` (without the query).
    public var path: String {
        RequestTarget(self.target).path
    }

    /// All values of the header `name` (case-insensitive), in received order.
    public func headerValues(_ name: String) -> [String] {
        let lowered = name.lowercased()
        return self.headers.compactMap { pair in
            pair.count == 2 && pair[0].lowercased() == lowered ? pair[1] : nil
        }
    }

    /// The first value of the header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        self.headerValues(name).first
    }
}

/// A response produced by a `/custom` responder (see ``TestUpstream/setResponder(_:)``).
///
/// If `headers` contain neither `Content-Length` nor `Transfer-Encoding`, the upstream adds a
/// `Content-Length` for `body`.
public struct TestResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int = 200, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response with a UTF-8 text body.
    public static func text(_ text: String, status: Int = 200, headers: [(String, String)] = []) -> TestResponse {
        TestResponse(
            status: status,
            headers: [("Content-Type", "text/plain; charset=utf-8")] + headers,
            body: Array(text.utf8)
        )
    }
}

/// The JSON body of the `/echo` route.
public struct EchoResponseBody: Sendable, Codable, Equatable {
    public var method: String
    public var target: String
    public var headers: [[String]]
    public var bodyBase64: String
    public var bodyLength: Int

    /// Decodes an `/echo` response body.
    public static func decode(_ json: some Collection<UInt8>) throws -> EchoResponseBody {
        try JSONDecoder().decode(EchoResponseBody.self, from: Data(json))
    }

    /// The echoed request body (decoded from ``bodyBase64``).
    public var body: [UInt8] {
        Data(base64Encoded: self.bodyBase64).map { Array($0) } ?? []
    }

    enum CodingKeys: String, CodingKey {
        case method
        case target
        case headers
        case bodyBase64 = "body_base64"
        case bodyLength = "body_length"
    }
}

/// The JSON body of the `/upload` route.
public struct UploadResponseBody: Sendable, Codable, Equatable {
    public var bytes: Int
    public var checksum: UInt32

    public init(bytes: Int, checksum: UInt32) {
        self.bytes = bytes
        self.checksum = checksum
    }

    /// Decodes an `/upload` response body.
    public static func decode(_ json: some Collection<UInt8>) throws -> UploadResponseBody {
        try JSONDecoder().decode(UploadResponseBody.self, from: Data(json))
    }
}
