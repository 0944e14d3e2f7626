public import NIOCore
public import NIOHTTP1

extension GatewayError {
    /// The JSON body `{"error": code, "message": ..., "upstream": ...}`.
    public func jsonBody() -> ByteBuffer {
        var json = "{\"error\":\(JSONString.quote(code.rawValue)),\"message\":\(JSONString.quote(message))"
        if let upstream { json += ",\"upstream\":\(JSONString.quote(upstream))" }
        if let cause { json += ",\"cause\":\(JSONString.quote(cause))" }
        json += "}\n"
        return ByteBuffer(string: json)
    }

    /// The response the client sees for an error the gateway made itself.
    public func response(extraHeaders: HTTPHeaders = [:]) -> ProxyResponse {
        let body = jsonBody()
        var headers: HTTPHeaders = [
            "Content-Type": "application/json",
            "Content-Length": String(body.readableBytes),
            "X-Gateway-Error": code.rawValue,
        ]
        headers.add(contentsOf: extraHeaders)
        return ProxyResponse(status: status, headers: headers, body: .bytes(body))
    }
}

/// Minimal JSON string quoting (RFC 8259), enough for error bodies and log fields.
public enum JSONString {
    public static func quote(_ s: String) -> String {
        var out = "\""
        out.reserveCapacity(s.utf8.count + 2)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
        return out
    }
}
