extension RequestFields {
    /// Calls `body` with each non-empty comma-separated token (trimmed of
    /// spaces and tabs) of every field `lowercaseName`, as bytes: no string
    /// is made for the names or the values.
    public func forEachToken(ofField lowercaseName: StaticString, _ body: (UnsafeRawBufferPointer) -> Void) {
        let length = lowercaseName.utf8CodeUnitCount
        forEachField { name, value, _ in
            guard name.count == length, HTTP1HeadLines.equalsIgnoringCase(name, from: 0, to: length, lowercaseName) else { return }
            Self.forEachToken(in: value, body)
        }
    }

    /// Whether a field `lowercaseName` lists `lowercaseToken` (ignoring case).
    public func field(_ lowercaseName: StaticString, lists lowercaseToken: StaticString) -> Bool {
        var found = false
        forEachToken(ofField: lowercaseName) { token in
            if !found, HTTP1HeadLines.equalsIgnoringCase(token, from: 0, to: token.count, lowercaseToken) { found = true }
        }
        return found
    }

    /// The field names `Connection` lists, but `keep-alive` (which goes
    /// anyway) and `close` (which names no field). Rare: most requests list
    /// only those two, and then no string is made.
    public func namesInConnection() -> [String] {
        var named: [String] = []
        forEachToken(ofField: "connection") { token in
            if !HTTP1HeadLines.equalsIgnoringCase(token, from: 0, to: token.count, "keep-alive"),
               !HTTP1HeadLines.equalsIgnoringCase(token, from: 0, to: token.count, "close") {
                named.append(String(decoding: token, as: UTF8.self))
            }
        }
        return named
    }

    /// The tokens of one comma-separated value, trimmed, empty ones left out.
    @usableFromInline
    static func forEachToken(in value: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        var start = 0
        while start <= value.count {
            var end = start
            while end < value.count, value[end] != UInt8(ascii: ",") { end += 1 }
            var first = start
            var last = end
            while first < last, value[first] == 32 || value[first] == 9 { first += 1 }
            while last > first, value[last - 1] == 32 || value[last - 1] == 9 { last -= 1 }
            if first < last { body(UnsafeRawBufferPointer(rebasing: value[first..<last])) }
            start = end + 1
        }
    }
}
