extension Optional where Wrapped == Int {
    /// The smaller of two slots, either of which may be absent: the first
    /// match in slot order, of the matches found by two lookups.
    func smallerSlot(_ other: Int?) -> Int? {
        guard let mine = self else { return other }
        guard let other else { return mine }
        return Swift.min(mine, other)
    }
}
