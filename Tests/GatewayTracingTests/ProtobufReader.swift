/// A protobuf wire-format walker for the tests: a message's fields in order,
/// nested messages read on demand.
enum ProtobufReader {
    struct Failure: Error {}

    struct Field {
        var number: UInt64
        var wireType: UInt64
        /// A varint's or fixed64's value.
        var value: UInt64 = 0
        /// A length-delimited field's bytes.
        var bytes: [UInt8] = []

        func message() throws -> [Field] {
            guard wireType == 2 else { throw Failure() }
            return try ProtobufReader.fields(bytes)
        }

        func string() throws -> String {
            guard wireType == 2 else { throw Failure() }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    static func fields(_ bytes: [UInt8]) throws -> [Field] {
        var index = 0
        func varint() throws -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard index < bytes.count, shift < 64 else { throw Failure() }
                let byte = bytes[index]
                index += 1
                result |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return result }
                shift += 7
            }
        }
        var fields: [Field] = []
        while index < bytes.count {
            let key = try varint()
            var field = Field(number: key >> 3, wireType: key & 7)
            switch field.wireType {
            case 0:
                field.value = try varint()
            case 1:
                guard index + 8 <= bytes.count else { throw Failure() }
                for offset in 0..<8 { field.value |= UInt64(bytes[index + offset]) << (8 * UInt64(offset)) }
                index += 8
            case 2:
                let length = Int(try varint())
                guard index + length <= bytes.count else { throw Failure() }
                field.bytes = Array(bytes[index..<index + length])
                index += length
            default:
                throw Failure()
            }
            fields.append(field)
        }
        return fields
    }
}
