public import NIOHTTP1

extension RequestFields: Sequence {
    public typealias Element = (name: String, value: String)

    /// The fields passed on, in order: the prepended fields, the kept lines, then the added fields.
    public struct Iterator: IteratorProtocol {
        @usableFromInline let fields: RequestFields
        @usableFromInline var line = 0
        @usableFromInline var addedIndex = 0

        @usableFromInline
        init(fields: RequestFields) {
            self.fields = fields
        }

        public mutating func next() -> Element? {
            if addedIndex < fields.leadingCount {
                defer { addedIndex += 1 }
                return fields.added[addedIndex]
            }
            while line < fields.lines.count {
                defer { line += 1 }
                if fields.isKept(line) { return (fields.lines.name(of: line), fields.lines.value(of: line)) }
            }
            guard addedIndex < fields.added.count else { return nil }
            defer { addedIndex += 1 }
            return fields.added[addedIndex]
        }
    }

    public func makeIterator() -> Iterator { Iterator(fields: self) }

    public var underestimatedCount: Int { count }
}

extension RequestFields: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init()
        added = elements.map { (name: $0.0, value: $0.1) }
    }
}

extension RequestFields: Equatable {
    /// As `HTTPHeaders` compares: the same fields, whether kept as lines or added.
    public static func == (lhs: RequestFields, rhs: RequestFields) -> Bool {
        lhs.headers == rhs.headers
    }
}

extension RequestFields: CustomStringConvertible {
    public var description: String { headers.description }
}
