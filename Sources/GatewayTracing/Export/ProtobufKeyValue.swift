/// OTLP's attributes on the wire: a `KeyValue` (`key` = 1, `value` = 2, an
/// `AnyValue`), whose value is one of `string_value` = 1, `bool_value` = 2,
/// `int_value` = 3 (an `int64` varint, two's complement) or `double_value` = 4
/// (8 bytes). Each one's size is its key's length and its value's, known
/// before anything is written: a span's attributes need no size pass.
extension ProtobufSize {
    /// A `KeyValue` message (its own key and length left out) whose `AnyValue` takes `valueSize` bytes.
    static func keyValue(_ key: StaticString, valueSize: Int) -> Int {
        string(1, key) + lengthDelimited(2, valueSize)
    }

    /// An `AnyValue` holding a string of `utf8Count` bytes.
    static func stringValue(utf8Count: Int) -> Int {
        lengthDelimited(1, utf8Count)
    }

    /// An `AnyValue` holding `value`.
    static func stringValue(_ value: some StringProtocol) -> Int {
        string(1, value)
    }

    /// An `AnyValue` holding a bool: one byte of key, one of value.
    static var boolValue: Int { varintField(2, 1) }

    /// An `AnyValue` holding `value`.
    static func intValue(_ value: Int64) -> Int {
        varintField(3, UInt64(bitPattern: value))
    }

    /// An `AnyValue` holding a double: its key and 8 bytes.
    static var doubleValue: Int { fixed64(4) }
}

extension ProtobufPointerWriter {
    /// A `KeyValue` field numbered `field` up to its value: the field's key
    /// and length, `key`, and the `AnyValue`'s key and length (`valueSize`).
    /// One of the value writes below follows.
    mutating func keyValueHeader(_ field: UInt64, _ key: StaticString, valueSize: Int) {
        messageHeader(field, size: ProtobufSize.keyValue(key, valueSize: valueSize))
        stringField(1, key)
        messageHeader(2, size: valueSize)
    }

    mutating func stringValue(_ value: some StringProtocol) {
        stringField(1, value)
    }

    mutating func boolValue(_ value: Bool) {
        varintField(2, value ? 1 : 0)
    }

    mutating func intValue(_ value: Int64) {
        varintField(3, UInt64(bitPattern: value))
    }

    mutating func doubleValue(_ value: Double) {
        fixed64Field(4, value.bitPattern)
    }
}
