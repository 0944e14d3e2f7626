import Foundation
import GatewayConfig
import GatewayCore
import GatewayObservability
import GatewayTesting
import Testing

/// `gateway trace har` on a run with auth, retries and interception: the file
/// opens in a real HAR consumer (haralyzer) with every entry's timings summing
/// to its time, holds no secret, and an entry turns back into the curl line
/// that replays its request.
@Suite("HAR export of a live run", .timeLimit(.minutes(3)))
struct HARExportIntegrationTests {
    static let haralyzerInstalled: Bool = {
        guard which("python3") != nil else { return false }
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        check.arguments = ["python3", "-c", "import haralyzer"]
        check.standardOutput = FileHandle.nullDevice
        check.standardError = FileHandle.nullDevice
        guard (try? check.run()) != nil else { return false }
        check.waitUntilExit()
        return check.terminationStatus == 0
    }()

    /// Reads the file with haralyzer; checks the HAR 1.2 fields and the timings sum; prints one JSON summary per entry.
    static let haralyzerScript = #"""
        import json, sys
        from haralyzer import HarParser, HarPage
        parser = HarParser.from_file(sys.argv[1])
        assert parser.version == "1.2", parser.version
        assert parser.creator["name"] == "gateway"
        out = []
        for e in HarPage("unknown", har_parser=parser).entries:
            t = e.timings
            phases = ["blocked", "dns", "connect", "ssl", "send", "wait", "receive"]
            assert set(phases) <= set(t), t
            applied = sum(t[k] for k in phases if t[k] >= 0)
            assert abs(applied - e.time) < 1e-6, (e.url, t, e.time)
            assert all(t[k] >= 0 for k in ("send", "wait", "receive")), t
            assert e.startTime is not None, e.raw_entry["startedDateTime"]
            req, res = e.request, e.response
            for k in ("method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"):
                assert k in req.raw_entry, k
            for k in ("status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize", "bodySize"):
                assert k in res.raw_entry, k
            assert {"size", "mimeType"} <= set(res.raw_entry["content"]), res.raw_entry["content"]
            assert isinstance(e.raw_entry["cache"], dict)
            post = req.raw_entry.get("postData") or {}
            out.append({
                "url": e.url, "method": req.method, "status": e.status, "time": e.time, "ssl": t["ssl"],
                "attempts": [a.get("status") for a in e.raw_entry["_attempts"]], "upstream": e.raw_entry.get("_upstream"),
                "authorization": req.get_header_value("Authorization"), "text": req.text, "encoding": post.get("encoding"),
                "responseType": res.raw_entry["content"]["mimeType"], "setCookie": res.get_header_value("Set-Cookie"),
            })
        print(json.dumps(out))
        """#

    struct Summary: Decodable {
        let url: String
        let method: String
        let status: Int
        let time: Double
        let ssl: Double
        let attempts: [Int?]
        let upstream: String?
        let authorization: String?
        let text: String?
        let encoding: String?
        let responseType: String
        let setCookie: String?
    }

    func exportHAR(_ run: TracedRun, _ arguments: [String] = []) async throws -> [UInt8] {
        let out = "\(run.dir)/export-\(UUID().uuidString).har"
        let result = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["trace", "har", "--file", run.traceFile, "-o", out] + arguments)
        #expect(result.status == 0, "\(result.stderrString)")
        return try Array(Data(contentsOf: URL(fileURLWithPath: out)))
    }

    @Test func harOpensInHaralyzerWithTimingsSummingAndNoSecret() async throws {
        try #require(FileManager.default.fileExists(atPath: GatewayProcess.executableURL.path), "build the executable: swift build")
        try #require(Self.haralyzerInstalled, "python3 -m pip install haralyzer (.ci/run installs it)")
        let run = try await TracedRun.start()
        defer { Task { await run.stop() } }
        let har = try await exportHAR(run)
        TracedRun.expectNoSecret(in: har, "the HAR file")
        let path = "\(run.dir)/all.har"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(har)))

        let script = "\(run.dir)/check_har.py"
        #expect(FileManager.default.createFile(atPath: script, contents: Data(Self.haralyzerScript.utf8)))
        let checked = try await ProcessRunner.run("python3", [script, path])
        #expect(checked.status == 0, "haralyzer: \(checked.stderrString)")
        let entries = try JSONDecoder().decode([Summary].self, from: Data(checked.stdout))
        try #require(entries.count == 4, "\(checked.stdoutString)")

        let intercepted = entries[0], retried = entries[1], json = entries[2], binary = entries[3]
        #expect(intercepted.url == "https://localhost:\(run.tls.port)/echo?n=1" && intercepted.status == 200 && intercepted.upstream == "api")
        #expect(intercepted.ssl >= 0, "a new TLS connection to the upstream: its handshake is timed")
        #expect(intercepted.responseType == "application/json")
        #expect(retried.attempts == [503, 200] && retried.status == 200, "\(retried.attempts)")
        #expect(retried.setCookie == "${REDACTED_SET_COOKIE}", "the response head, redacted as in the trace")
        #expect(json.method == "POST" && json.upstream == "echo")
        #expect(json.url.hasSuffix("/echo/json?token=${REDACTED_TOKEN}&q=a%20b"), "\(json.url)")
        #expect(json.authorization == "${REDACTED_AUTHORIZATION}")
        #expect(json.text?.contains(#""password":"[REDACTED]""#) == true, "\(json.text ?? "")")
        #expect(binary.method == "PUT" && binary.encoding == "base64")
        #expect(binary.text.flatMap { Data(base64Encoded: $0) } == Data(TracedRun.binaryBody))
        for (entry, record) in zip(entries, run.records) {
            #expect(abs(entry.time - record.duration * 1000) < 0.05, "time is the exchange's duration: \(entry.time) ms vs \(record.duration) s")
        }

        // Selections: by upstream, by id, by age.
        let echoOnly = try JSONDecoder().decode(HARLog.self, from: Data(try await exportHAR(run, ["--upstream", "echo"])))
        #expect(echoOnly.log.entries.map(\._upstream) == ["echo", "echo"])
        let ids = [run.records[1].id, run.records[3].id]
        let byID = try JSONDecoder().decode(HARLog.self, from: Data(try await exportHAR(run, ["--id", ids[0], "--id", ids[1]])))
        #expect(byID.log.entries.map(\._id) == ids)
        #expect(try JSONDecoder().decode(HARLog.self, from: Data(try await exportHAR(run, ["--since", "1h"]))).log.entries.count == 4)
        try await Task.sleep(for: .milliseconds(20))
        #expect(try JSONDecoder().decode(HARLog.self, from: Data(try await exportHAR(run, ["--since", "10ms"]))).log.entries.isEmpty)
    }

    /// The JSON POST's entry, turned back into a curl command (as HAR-to-curl
    /// tools do), is the record's curl line, and replays the request through the gateway.
    @Test func anEntryRoundTripsToItsCurlLine() async throws {
        let run = try await TracedRun.start()
        defer { Task { await run.stop() } }
        let har = HARExport.fromFiles.log(run.records)
        let entry = har.log.entries[2]
        let record = run.records[2]
        let command = Self.curlCommand(entry.request, proxy: run.gateway.proxyURL)
        #expect(command.line == record.curl, "\(command.line)\n\(record.curl)")

        let original = try #require(run.plain.receivedRequests.first)
        let replay = try await ProcessRunner.run("sh", ["-c", command.line + " -sS -o /dev/null"], environment: [
            "REDACTED_AUTHORIZATION": "Bearer replayed", "REDACTED_TOKEN": "t", "NO_PROXY": "", "no_proxy": "",
        ])
        #expect(replay.status == 0, "\(replay.stderrString)\n\(command.line)")
        let seen = try #require(run.plain.receivedRequests.last)
        #expect(run.plain.receivedRequests.count == 3)
        #expect(seen.method == "POST" && seen.target == "/echo/json?token=t&q=a%20b")
        #expect(seen.header("X-Api-Key") == TracedRun.apiKey.value, "the gateway injects its credential again")
        #expect(seen.header("Authorization") == "Bearer replayed")
        #expect(seen.body == Array((entry.request.postData?.text ?? "-").utf8))
        #expect(original.body == Array(TracedRun.jsonBody.utf8) && original.method == "POST")
    }

    /// A HAR request as a curl command: `${NAME}` placeholders become shell variables.
    static func curlCommand(_ request: HARLog.Request, proxy: String) -> CurlCommand {
        let body: CurlCommand.Body = request.postData.map { .inline($0.text) } ?? .none
        return CurlCommand(
            method: request.method, url: parts(request.url),
            headers: request.headers.map { CurlCommand.Header(name: $0.name, value: parts($0.value)) }, body: body, proxy: proxy
        )
    }

    /// `text` split at `${NAME}` placeholders.
    static func parts(_ text: String) -> [ShellQuoting.Part] {
        var parts: [ShellQuoting.Part] = []
        var rest = Substring(text)
        while let open = rest.range(of: "${"), let close = rest[open.upperBound...].firstIndex(of: "}") {
            if open.lowerBound > rest.startIndex { parts.append(.literal(String(rest[..<open.lowerBound]))) }
            parts.append(.variable(String(rest[open.upperBound..<close])))
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty || parts.isEmpty { parts.append(.literal(String(rest))) }
        return parts
    }
}
