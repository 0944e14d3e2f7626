import Foundation

/// The admin page's section on mocks, replay, faults and recording: per upstream and
/// kind, whether it acts now (and whether a switch says so), then its rules.
/// Written when the page is asked for (`/`); `gateway faults|mocks|replay|record
/// on|off` switch them, `/injection` has the same as JSON.
extension InjectionReport {
    var html: String {
        var rows = ""
        for block in blocks() {
            let state = block.state.hasPrefix("on") ? "on" : "off"
            rows += "<tr class=\"injection \(state)\"><td class=\"l\">\(Self.escaped(block.upstream))</td>"
                + "<td class=\"l\">\(block.kind.rawValue)</td><td class=\"l\">\(Self.escaped(block.state))</td>"
                + "<td class=\"l ep\">\(block.lines.map(Self.escaped).joined(separator: "<br>"))</td></tr>\n"
        }
        if rows.isEmpty {
            rows = "<tr><td class=\"l\" colspan=\"4\">No upstream configures mocks, replay, faults or recording.</td></tr>\n"
        }
        return """
            <h2 id="injection-title">mocks, replay, faults and recording</h2>
            <table id="injection-table">
            <thead><tr><th class="l">upstream</th><th class="l">kind</th><th class="l">state</th><th class="l">rules</th></tr></thead>
            <tbody>
            \(rows)</tbody>
            </table>
            <div class="legend">As of this page's load. Switch them without a restart: <code>gateway faults on|off|list</code> \
            (and <code>gateway mocks</code>, <code>gateway replay</code>); JSON: <a href="/injection">/injection</a>.</div>

            """
    }

    /// HTML text: `&`, `<`, `>` and quotes escaped.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
