import NIOHTTP1

extension HTTPResponseHead {
    /// The `Content-Length` of the response, nil when absent, invalid, ambiguous,
    /// or overridden by `Transfer-Encoding`.
    var upstreamContentLength: Int? {
        guard !headers.contains(name: "transfer-encoding") else { return nil }
        let values = headers[canonicalForm: "content-length"]
        guard let first = values.first, values.allSatisfy({ $0 == first }),
            let length = Int(first), length >= 0
        else { return nil }
        return length
    }
}
