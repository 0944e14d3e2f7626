import GatewayCore
import Logging

/// The one info line per exchange: method, target without query values, status,
/// duration, bytes. Never a header value, never a query value.
enum ExchangeLogLine {
    /// `method` and `url` are only formatted when the line is logged (not at warning level).
    static func log(
        _ logger: Logger,
        method: @autoclosure () -> String,
        url: @autoclosure () -> String,
        status: Int,
        started: ContinuousClock.Instant,
        bytesIn: Int,
        bytesOut: Int,
        upstream: String?,
        error: GatewayError.Code?
    ) {
        guard logger.logLevel <= .info else { return }
        let elapsed = (ContinuousClock.now - started).seconds * 1000
        var metadata: Logger.Metadata = [
            "status": "\(status)",
            "ms": "\((elapsed * 100).rounded() / 100)",
            "bytes_in": "\(bytesIn)",
            "bytes_out": "\(bytesOut)",
        ]
        if let upstream { metadata["upstream"] = "\(upstream)" }
        if let error { metadata["error"] = "\(error.rawValue)" }
        logger.info("\(method()) \(withoutQueryValues(url())) \(status)", metadata: metadata)
    }

    /// `https://h/p?token=abc&x=1` → `https://h/p?token=&x=`.
    static func withoutQueryValues(_ url: String) -> String {
        guard let q = url.firstIndex(of: "?") else { return url }
        let query = url[url.index(after: q)...]
        let names = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> Substring in
            if let eq = pair.firstIndex(of: "=") { return pair[..<eq] + "=" }
            return pair
        }
        return String(url[...q]) + names.joined(separator: "&")
    }
}
