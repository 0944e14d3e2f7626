import Foundation
import GatewayConfig

/// How `run` and `check-config` report an invalid config on standard error:
/// every problem found, one per line as `<file>: <key path>: <message>`,
/// after a line that counts them. One problem stays one line.
enum InvalidConfigReport {
    static func text(_ error: ConfigError) -> String {
        guard error.issues.count > 1 else { return "gateway: invalid config: \(error.description)\n" }
        let count = "gateway: invalid config: \(error.issues.count) problems in \(error.file)\n"
        return count + error.lines.map { $0 + "\n" }.joined()
    }

    static func write(_ error: ConfigError) {
        FileHandle.standardError.write(Data(text(error).utf8))
    }
}
