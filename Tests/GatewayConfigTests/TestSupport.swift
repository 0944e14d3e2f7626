import Foundation
import GatewayConfig
import GatewayTesting
import Testing

/// Helpers shared by the config tests.
enum TestSupport {
    static let file = "test.yaml"

    /// Parses `yaml`, recording an issue (and returning nil) when it fails.
    static func parse(
        _ yaml: String,
        environment: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> GatewayConfig? {
        do {
            return try ConfigLoader.parse(yaml: yaml, file: file, environment: environment)
        } catch {
            Issue.record("unexpected config error: \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// The error parsing `yaml` throws, or nil if it parses.
    static func error(of yaml: String, environment: [String: String] = [:]) -> ConfigError? {
        do {
            _ = try ConfigLoader.parse(yaml: yaml, file: file, environment: environment)
            return nil
        } catch {
            return error
        }
    }

    /// Expects parsing to fail at exactly `keyPath` with a message containing `fragment`.
    static func expectError(
        _ yaml: String,
        keyPath: String,
        contains fragment: String,
        environment: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let error = error(of: yaml, environment: environment) else {
            Issue.record("expected an error at '\(keyPath)', but the config loaded", sourceLocation: sourceLocation)
            return
        }
        #expect(error.file == file, sourceLocation: sourceLocation)
        #expect(error.keyPath == keyPath, "message: \(error.message)", sourceLocation: sourceLocation)
        #expect(error.message.contains(fragment), "message: \(error.message)", sourceLocation: sourceLocation)
    }

    /// The package root, found from this file's path.
    static func repositoryRoot(filePath: String = #filePath) -> URL {
        URL(fileURLWithPath: filePath)
            .deletingLastPathComponent()  // GatewayConfigTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()
    }

    /// A fresh file in a fresh temporary directory; removed by the caller via `removeDirectory`.
    static func temporaryFile(named name: String, contents: String) throws -> URL {
        let directory = URL(fileURLWithPath: TestScratch.path("gateway-config-tests"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(contents.utf8).write(to: url)
        return url
    }

    static func removeDirectory(of file: URL) {
        try? FileManager.default.removeItem(at: file.deletingLastPathComponent())
    }
}
