/// What the admin listener serves from the recent records: `/traces` and `/traces.har`.
extension RecentTraces {
    /// The `/traces` JSON.
    public func reportJSON(debug: Bool) -> [UInt8] {
        RecentExchangesReport(debug: debug, recent: self).json()
    }

    /// The kept records as a HAR file (`/traces.har`); body files from the bytes kept with them.
    public func harJSON() throws -> [UInt8] {
        let items = items
        var bodies: [String: [UInt8]] = [:]
        for item in items { if let file = item.bodyFile { bodies[file.path] = file.bytes } }
        let known = bodies
        return try HARExport { known[$0] }.json(items.map(\.record))
    }
}
