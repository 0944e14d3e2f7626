import Foundation
import GatewayTesting

/// What the test upstream's `/echo` route answers.
struct EchoReply: Decodable {
    var method: String
    var target: String
    var headers: [[String]]
    var body_base64: String
    var body_length: Int

    func values(_ name: String) -> [String] {
        headers.filter { $0[0].lowercased() == name.lowercased() }.map { $0[1] }
    }

    var headerNames: [String] { headers.map { $0[0] } }
}

extension ProcessResult {
    func json<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: Data(stdout))
    }
}

/// Splits `curl -i` output (or a raw HTTP response) into status, headers, body.
struct RawResponse {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    init?(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let headEnd = text.range(of: "\r\n\r\n") else { return nil }
        let head = text[..<headEnd.lowerBound]
        var lines = head.components(separatedBy: "\r\n")
        guard !lines.isEmpty else { return nil }
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        self.status = status
        self.headers = lines.compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        self.body = Array(text[headEnd.upperBound...].utf8)
    }

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var bodyText: String { String(decoding: body, as: UTF8.self) }
}
