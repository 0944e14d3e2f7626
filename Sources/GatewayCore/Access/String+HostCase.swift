extension String {
    /// The host name in lower case: itself when it has no upper-case ASCII
    /// letter and no other byte `lowercased()` could change (the usual case: the
    /// listener lowercases hosts as it reads them), so the per-request paths that
    /// normalize a host again (pool keys, metric labels) make no new string.
    /// The bytes are read in place (`withUTF8`), not through the UTF-8 view's
    /// iterator, which cost more than the rest of the check.
    @inlinable
    public var lowercasedHost: String {
        var bytes = self
        let unchanged = bytes.withUTF8 { utf8 in
            for byte in utf8 where byte >= 0x80 || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) {
                return false
            }
            return true
        }
        return unchanged ? self : lowercased()
    }
}
