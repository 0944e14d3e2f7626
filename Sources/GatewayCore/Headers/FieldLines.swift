/// The field lines of a request head as the client sent them, copied once out
/// of the bytes read, with an index of where each line's name and value are.
/// One array holds both: the index first (four offsets a line), then the
/// lines' bytes. Immutable once made: edits are ``RequestFields``' business.
///
/// Made only by ``init(parsing:from:to:count:)``, which checks every line as
/// the request parser must (a name that is a token, no whitespace before the
/// colon, no control byte in the value), so a line's bytes can be written to
/// the next hop as they are.
public struct FieldLines: Sendable {
    /// The most lines kept as bytes (``RequestFields`` marks removals in a 64-bit mask).
    public static let maxCount = 64

    /// A line that does not parse as a field.
    public struct Malformed: Error {}

    /// The index (``indexStride`` bytes a line), then the lines' bytes.
    @usableFromInline let storage: [UInt8]
    /// How many lines.
    public let count: Int

    @usableFromInline static var indexStride: Int { 16 }

    public init() {
        storage = []
        count = 0
    }

    /// Reads the `count` field lines between `start` and `end` of `raw` (each
    /// ending in CRLF, `end` just after the last one's LF).
    public init(parsing raw: UnsafeRawBufferPointer, from start: Int, to end: Int, count: Int) throws(Malformed) {
        precondition(count <= Self.maxCount)
        let indexBytes = count * Self.indexStride
        let blockLength = end - start
        var malformed = false
        storage = [UInt8](unsafeUninitializedCapacity: indexBytes + blockLength) { buffer, initialized in
            let out = UnsafeMutableRawBufferPointer(buffer)
            if blockLength > 0 {
                out.baseAddress!.advanced(by: indexBytes).copyMemory(from: raw.baseAddress!.advanced(by: start), byteCount: blockLength)
            }
            var lineStart = start
            var line = 0
            // Offsets into the array: the block starts at `indexBytes`.
            let shift = indexBytes - start
            while line < count {
                guard let lineEnd = HTTP1HeadLines.lineEnd(in: raw, from: lineStart),
                      let (colon, valueStart, valueEnd) = HTTP1HeadLines.fieldBounds(raw, from: lineStart, to: lineEnd)
                else {
                    malformed = true
                    break
                }
                let entry = line * Self.indexStride
                out.storeBytes(of: UInt32(lineStart + shift), toByteOffset: entry, as: UInt32.self)
                out.storeBytes(of: UInt32(colon + shift), toByteOffset: entry + 4, as: UInt32.self)
                out.storeBytes(of: UInt32(valueStart + shift), toByteOffset: entry + 8, as: UInt32.self)
                out.storeBytes(of: UInt32(valueEnd + shift), toByteOffset: entry + 12, as: UInt32.self)
                lineStart = lineEnd + 2
                line += 1
            }
            initialized = malformed ? 0 : indexBytes + blockLength
        }
        self.count = count
        if malformed { throw Malformed() }
    }

    /// Where line `line`'s name and value are in the bytes `withBytes` gives.
    @inlinable
    public func bounds(of line: Int, in raw: UnsafeRawBufferPointer) -> (name: Range<Int>, value: Range<Int>) {
        let entry = line * Self.indexStride
        let nameStart = Int(raw.loadUnaligned(fromByteOffset: entry, as: UInt32.self))
        let colon = Int(raw.loadUnaligned(fromByteOffset: entry + 4, as: UInt32.self))
        let valueStart = Int(raw.loadUnaligned(fromByteOffset: entry + 8, as: UInt32.self))
        let valueEnd = Int(raw.loadUnaligned(fromByteOffset: entry + 12, as: UInt32.self))
        return (nameStart..<colon, valueStart..<valueEnd)
    }

    /// Calls `body` with the bytes the lines' bounds point into.
    @inlinable
    public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes(body)
    }

    /// Line `line`'s name as a string.
    public func name(of line: Int) -> String {
        withBytes { raw in HTTP1HeadLines.text(raw, bounds(of: line, in: raw).name) }
    }

    /// Line `line`'s value (without the whitespace around it) as a string.
    public func value(of line: Int) -> String {
        withBytes { raw in HTTP1HeadLines.text(raw, bounds(of: line, in: raw).value) }
    }
}
