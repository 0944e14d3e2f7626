import GatewayTesting

extension GatewayHarness {
    /// The admin's `/metrics`, fetched again (bounded: `timeout`) until it
    /// contains `line`; the last one fetched either way.
    func metrics(containing line: String, timeout: Duration = .seconds(10)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        var metrics = ""
        repeat {
            metrics = try await ProcessRunner.run("curl", ["-s", "\(adminURL)/metrics"]).stdoutString
            if metrics.contains(line) { return metrics }
            try await Task.sleep(for: .milliseconds(50))
        } while ContinuousClock.now < deadline
        return metrics
    }
}
