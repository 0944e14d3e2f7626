/// The few JSON pieces a trace line needs, appended to one byte buffer.
struct JSONLineWriter {
    var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    /// `{"key":` for the first key of an object, `,"key":` for the others.
    /// Keys are literals of the trace format: plain ASCII, copied without an escape scan.
    mutating func open(_ key: StaticString, first: Bool = false) {
        bytes.append(first ? UInt8(ascii: "{") : UInt8(ascii: ","))
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func field(_ key: StaticString, _ value: String) {
        open(key)
        string(value)
    }

    mutating func field(_ key: StaticString, _ value: Int) {
        open(key)
        integer(value)
    }

    mutating func field(_ key: StaticString, _ value: Double) {
        open(key)
        number(value)
    }

    /// A key whose string value `write` writes (escaped as it goes, see ``JSONStringText``).
    mutating func field(_ key: StaticString, writing write: (inout JSONStringText) -> Void) {
        open(key)
        quoted(write)
    }

    mutating func integer(_ value: Int) {
        bytes.append(contentsOf: String(value).utf8)
    }

    /// As `JSONEncoder`: `description`, `1.0` as `1`. (Non-finite values cannot be
    /// encoded by `JSONEncoder` at all; they never occur in a duration.)
    mutating func number(_ value: Double) {
        guard value.isFinite else {
            bytes.append(contentsOf: "0".utf8)
            return
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    /// A quoted string: `"` and `\` escaped, control characters as `\n`-style
    /// or `\u00XX` escapes, `/` and everything else (UTF-8) as is.
    mutating func string(_ value: String) {
        quoted { $0.write(value) }
    }

    /// A quoted string whose content `write` writes, escaped as it goes. The
    /// buffer moves into the writer and back: it is never copied.
    mutating func quoted(_ write: (inout JSONStringText) -> Void) {
        bytes.append(UInt8(ascii: "\""))
        var text = JSONStringText()
        swap(&text.bytes, &bytes)
        write(&text)
        swap(&text.bytes, &bytes)
        bytes.append(UInt8(ascii: "\""))
    }
}
