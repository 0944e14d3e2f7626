import Foundation
import GatewayObservability
import GatewayTesting
import Testing

/// The admin page's recent exchanges, rendered by a real browser (headless
/// Chromium) against the live admin listener, and the HAR it links to.
@Suite("Admin recent exchanges", .timeLimit(.minutes(3)))
struct AdminRecentExchangesTests {
    static let chromium = which("chromium")

    /// `/traces` lists the run's exchanges newest first; `/traces.har` serves them as HAR; neither holds a secret.
    @Test func tracesAndHARAreServedByTheAdminListener() async throws {
        let run = try await TracedRun.start()
        defer { Task { await run.stop() } }
        let traces = try await ProcessRunner.run("curl", ["-sS", "\(run.gateway.adminURL)/traces"])
        #expect(traces.status == 0)
        TracedRun.expectNoSecret(in: traces.stdout, "/traces")
        let report = try JSONSerialization.jsonObject(with: Data(traces.stdout)) as? [String: Any]
        #expect(report?["debug"] as? Bool == true)
        let rows = report?["exchanges"] as? [[String: Any]] ?? []
        #expect(rows.compactMap { $0["id"] as? String } == run.records.reversed().map(\.id))
        #expect(rows.first?["curl"] as? String == run.records.last?.curl)

        let har = try await ProcessRunner.run("curl", ["-sS", "-f", "\(run.gateway.adminURL)/traces.har"])
        #expect(har.status == 0, "\(har.stderrString)")
        TracedRun.expectNoSecret(in: har.stdout, "/traces.har")
        let log = try JSONDecoder().decode(HARLog.self, from: Data(har.stdout))
        #expect(log.log.entries.map(\._id) == run.records.map(\.id))
        #expect(log.log.entries.last?.request.postData?.encoding == "base64", "the binary body kept with its record")
    }

    @Test(.enabled(if: chromium != nil, "apt-get install chromium"))
    func headlessChromiumRendersTheExchangeRows() async throws {
        let chromium = try #require(Self.chromium)
        let run = try await TracedRun.start()
        defer { Task { await run.stop() } }
        let page = "\(run.gateway.adminURL)/"
        // Virtual time lets the page's fetches of /stats and /traces finish before the DOM is dumped.
        let common = [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
            "--user-data-dir=\(run.dir)/chromium-profile", "--virtual-time-budget=5000",
        ]
        let dom = try await ProcessRunner.run(chromium, common + ["--dump-dom", page], timeout: .seconds(90))
        #expect(dom.status == 0, "\(dom.stderrString.suffix(2000))")
        let html = dom.stdoutString
        // The rendered rows (the page's script holds the same markup as a template).
        let rows = try #require(Self.element(#"<tbody id="exchanges">"#, "</tbody>", in: html), "\(html.suffix(3000))")
        #expect(rows.components(separatedBy: #"<tr class="exchange""#).count - 1 == run.records.count, "\(rows)")
        for record in run.records {
            #expect(rows.contains(#"data-id="\#(record.id)""#), "row of \(record.id)")
        }
        #expect(rows.contains("127.0.0.1:\(run.plain.port)/echo/json"), "the endpoint column")
        #expect(rows.contains("localhost:\(run.tls.port)/custom/flaky"))
        #expect(rows.contains(#"<td>2</td>"#), "the retried exchange shows 2 attempts")
        #expect(rows.contains("curl -x '\(run.gateway.proxyURL)'"), "the curl lines")
        #expect(rows.components(separatedBy: ">copy</button>").count - 1 == run.records.count, "a copy button per line")
        #expect(html.contains(#"id="har-download" href="/traces.har""#))
        TracedRun.expectNoSecret(in: Array(html.utf8), "the rendered page")

        // Kept after the test (the run's own files are deleted): its path is printed.
        let screenshotDir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-admin-screenshot")
        let screenshot = "\(screenshotDir)/admin-recent-exchanges.png"
        let shot = try await ProcessRunner.run(chromium, common + ["--window-size=1400,1000", "--screenshot=\(screenshot)", page], timeout: .seconds(90))
        #expect(shot.status == 0, "\(shot.stderrString.suffix(2000))")
        let size = (try? FileManager.default.attributesOfItem(atPath: screenshot)[.size] as? Int) ?? 0
        #expect(size > 10_000, "a rendered screenshot, not an empty one: \(size) bytes")
        print("admin page screenshot: \(screenshot)")
    }

    /// The text between `open` and the next `close`.
    static func element(_ open: String, _ close: String, in html: String) -> Substring? {
        guard let start = html.range(of: open), let end = html[start.upperBound...].range(of: close) else { return nil }
        return html[start.upperBound..<end.lowerBound]
    }
}
