extension String {
    /// The host name in lower case: itself when it has no upper-case ASCII
    /// letter and no other byte `lowercased()` could change (the usual case: the
    /// listener lowercases hosts as it reads them), so the per-request paths that
    /// normalize a host again (pool keys, metric labels) make no new string.
    @inlinable
    public var lowercasedHost: String {
        utf8.allSatisfy({ $0 < 0x80 && !($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) }) ? self : lowercased()
    }
}
