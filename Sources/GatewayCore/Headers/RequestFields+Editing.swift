extension RequestFields {
    /// Adds a field after the others.
    public mutating func add(name: String, value: String) {
        added.append((name, value))
    }

    /// Adds a field before the others.
    public mutating func prepend(name: String, value: String) {
        added.insert((name, value), at: 0)
        leadingCount += 1
    }

    /// Removes every field `name` (any case).
    public mutating func remove(name: String) {
        removeAll { Self.equalsIgnoringCase($0, name) }
    }

    /// Removes every field `name` and adds one with `value` after the others
    /// (as `HTTPHeaders.replaceOrAdd` does).
    public mutating func replaceOrAdd(name: String, value: String) {
        remove(name: name)
        add(name: name, value: value)
    }

    /// Room for `capacity` added fields.
    public mutating func reserveCapacity(_ capacity: Int) {
        added.reserveCapacity(capacity)
    }

    /// Removes every field whose name `predicate` accepts (given its bytes).
    public mutating func removeAll(where predicate: (UnsafeRawBufferPointer) -> Bool) {
        removeAllFields { name, _ in predicate(name) }
    }

    /// Removes every field `predicate` accepts, given its name and value as
    /// bytes: called once per field, in the fields' order (a predicate may keep
    /// state, as the router's "first Host" does). A line is marked, not
    /// copied; added fields are compacted in place, and only when one goes.
    public mutating func removeAllFields(where predicate: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool) {
        var kept = 0  // added fields kept so far: where the next kept one goes
        var removedAny = false
        func visitAdded(_ indices: Range<Int>) {
            for index in indices {
                let field = added[index]
                var removed = false
                Self.withBytes(field.name, field.value) { removed = predicate($0, $1) }
                if removed {
                    removedAny = true
                } else {
                    if removedAny { added[kept] = field }
                    kept += 1
                }
            }
        }
        let leading = leadingCount
        visitAdded(0..<leading)
        let keptLeading = kept
        if lines.count > 0 {
            var newlyDropped: UInt64 = 0
            lines.withBytes { raw in
                for line in 0..<lines.count where isKept(line) {
                    let (name, value) = lines.bounds(of: line, in: raw)
                    if predicate(UnsafeRawBufferPointer(rebasing: raw[name]), UnsafeRawBufferPointer(rebasing: raw[value])) {
                        newlyDropped |= 1 << UInt64(line)
                    }
                }
            }
            dropped |= newlyDropped
        }
        visitAdded(leading..<added.count)
        guard removedAny else { return }
        added.removeSubrange(kept...)
        leadingCount = keptLeading
    }

    /// Whether `raw`'s bytes in `range` spell `name`, ignoring ASCII case.
    @inlinable
    static func equalsIgnoringCase(_ raw: UnsafeRawBufferPointer, _ range: Range<Int>, _ name: String) -> Bool {
        equalsIgnoringCase(UnsafeRawBufferPointer(rebasing: raw[range]), name)
    }

    /// Whether `bytes` spell `name`, ignoring ASCII case.
    @inlinable
    public static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ name: String) -> Bool {
        let utf8 = name.utf8
        guard bytes.count == utf8.count else { return false }
        var i = 0
        for byte in utf8 {
            let x = bytes[i]
            guard x == byte || (x | 0x20 == byte | 0x20 && (x | 0x20) >= 97 && (x | 0x20) <= 122) else { return false }
            i += 1
        }
        return true
    }
}
