public import NIOHTTP1

/// The fields of a request on its way upstream, kept as the bytes the client
/// sent (``FieldLines``) with the gateway's edits beside them: a line removed
/// is a bit in `dropped`, a field added (`Via`, a credential, `traceparent`)
/// is a string pair after the lines (or, prepended, before them: the `Host`
/// the gateway sets). Reading a name makes no string; a value
/// is made into one only when a step asks for it; the upstream head copies the
/// kept lines as they are (``forEachField(_:)``).
///
/// The API has `HTTPHeaders`' names and meaning (case-insensitive names,
/// fields in order, `replaceOrAdd` appends), so the steps read and edit it as
/// they did headers. Fields not read from a client's bytes (HTTP/2, tests,
/// requests the gateway makes) are all "added".
public struct RequestFields: Sendable {
    @usableFromInline var lines: FieldLines
    /// Bit `i` set: line `i` is not passed on.
    @usableFromInline var dropped: UInt64
    /// Fields added, in order: the first `leadingCount` before the lines, the rest after them.
    @usableFromInline var added: [(name: String, value: String)]
    @usableFromInline var leadingCount = 0

    public init() {
        lines = FieldLines()
        dropped = 0
        added = []
    }

    public init(_ headers: HTTPHeaders) {
        self.init(headers.map { ($0.name, $0.value) })
    }

    /// Fields given as strings, in order (as `HTTPHeaders([(name, value)])`).
    public init(_ fields: [(String, String)]) {
        self.init(added: fields.map { (name: $0.0, value: $0.1) })
    }

    /// Fields given as strings, in order, kept as the array they came in (no copy).
    public init(added fields: [(name: String, value: String)]) {
        lines = FieldLines()
        dropped = 0
        added = fields
    }

    public init(lines: FieldLines) {
        self.lines = lines
        dropped = 0
        added = []
    }

    /// The fields in order, as `HTTPHeaders` (strings made for every field).
    public var headers: HTTPHeaders {
        var result = HTTPHeaders()
        result.reserveCapacity(count)
        for (name, value) in self { result.add(name: name, value: value) }
        return result
    }

    /// How many fields are passed on.
    public var count: Int { lines.count - (dropped & Self.mask(lines.count)).nonzeroBitCount + added.count }

    public var isEmpty: Bool { count == 0 }

    @inlinable
    static func mask(_ count: Int) -> UInt64 { count >= 64 ? ~0 : (1 << UInt64(count)) - 1 }

    @inlinable
    func isKept(_ line: Int) -> Bool { dropped & (1 << UInt64(line)) == 0 }

    /// Calls `body` with each field passed on, in order: a line's name and
    /// value as bytes (`fromLine` true: checked by the parser), or an added
    /// field's (not checked: the writer checks it).
    @inlinable
    public func forEachField(_ body: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, _ fromLine: Bool) -> Void) {
        for (name, value) in added[..<leadingCount] { Self.withBytes(name, value) { body($0, $1, false) } }
        if lines.count > 0 {
            lines.withBytes { raw in
                for line in 0..<lines.count where isKept(line) {
                    let (name, value) = lines.bounds(of: line, in: raw)
                    body(UnsafeRawBufferPointer(rebasing: raw[name]), UnsafeRawBufferPointer(rebasing: raw[value]), true)
                }
            }
        }
        for (name, value) in added[leadingCount...] { Self.withBytes(name, value) { body($0, $1, false) } }
    }

    @inlinable
    static func withBytes(_ name: String, _ value: String, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) {
        var name = name
        var value = value
        name.withUTF8 { n in value.withUTF8 { v in body(UnsafeRawBufferPointer(n), UnsafeRawBufferPointer(v)) } }
    }

    /// Whether a field passed on has a name `predicate` accepts (given its bytes).
    @inlinable
    public func containsName(where predicate: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        if lines.count > 0 {
            let found = lines.withBytes { raw in
                for line in 0..<lines.count where isKept(line) {
                    if predicate(UnsafeRawBufferPointer(rebasing: raw[lines.bounds(of: line, in: raw).name])) { return true }
                }
                return false
            }
            if found { return true }
        }
        for (name, _) in added {
            var name = name
            if name.withUTF8({ predicate(UnsafeRawBufferPointer($0)) }) { return true }
        }
        return false
    }

    /// The first value of the field `name` (any case), nil if none.
    public func first(name: String) -> String? {
        for (n, v) in added[..<leadingCount] where HopByHopHeaders.equalsIgnoringCase(n, name) { return v }
        if lines.count > 0 {
            let found: String? = lines.withBytes { raw in
                for line in 0..<lines.count where isKept(line) {
                    let (n, v) = lines.bounds(of: line, in: raw)
                    if Self.equalsIgnoringCase(raw, n, name) { return HTTP1HeadLines.text(raw, v) }
                }
                return nil
            }
            if let found { return found }
        }
        for (n, v) in added[leadingCount...] where HopByHopHeaders.equalsIgnoringCase(n, name) { return v }
        return nil
    }

    /// Whether a field `name` (any case) is passed on.
    public func contains(name: String) -> Bool {
        containsName { Self.equalsIgnoringCase($0, name) }
    }

    /// Every value of the field `name` (any case), in order.
    public subscript(name: String) -> [String] {
        var values: [String] = []
        for (n, v) in added[..<leadingCount] where HopByHopHeaders.equalsIgnoringCase(n, name) { values.append(v) }
        if lines.count > 0 {
            lines.withBytes { raw in
                for line in 0..<lines.count where isKept(line) {
                    let (n, v) = lines.bounds(of: line, in: raw)
                    if Self.equalsIgnoringCase(raw, n, name) { values.append(HTTP1HeadLines.text(raw, v)) }
                }
            }
        }
        for (n, v) in added[leadingCount...] where HopByHopHeaders.equalsIgnoringCase(n, name) { values.append(v) }
        return values
    }

    /// The comma-separated elements of every `name` field, trimmed, as
    /// `HTTPHeaders` gives them (empty runs between commas left out, an
    /// element of spaces kept as empty: the validator's verdicts rest on it).
    public subscript(canonicalForm name: String) -> [Substring] {
        self[name].flatMap { $0.split(separator: ",").map { $0.trimmingASCIISpaces() } }
    }
}
