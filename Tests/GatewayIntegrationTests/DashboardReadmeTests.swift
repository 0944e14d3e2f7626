import Foundation
import Testing

/// `dashboards/README.md` points only at files that exist in the repository
/// (it once sent readers to a `DESIGN.md` that is not there).
@Suite(.timeLimit(.minutes(1)))
struct DashboardReadmeTests {
    @Test func everyReferencedFileExists() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let dashboards = root.appendingPathComponent("dashboards")
        let text = try String(contentsOf: dashboards.appendingPathComponent("README.md"), encoding: .utf8)
        // Markdown files and source paths named in the text or as link targets.
        let pattern = try NSRegularExpression(pattern: #"[A-Za-z0-9_./-]+\.(md|swift|json)\b"#)
        let names = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range, in: text)!]) }
        #expect(names.contains("../README.md"), "the metric names point to the README's metrics section")
        for name in Set(names) {
            let candidates = [dashboards.appendingPathComponent(name), root.appendingPathComponent(name)]
            #expect(candidates.contains { FileManager.default.fileExists(atPath: $0.path) }, "\(name) is referenced but not in the repository")
        }
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("### Metrics and dashboards (config/examples/metrics-endpoints.yaml)"), "the anchor the link uses")
    }
}
