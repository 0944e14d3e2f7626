import Foundation
import Testing

/// Every Swift file the README's walk and layout name exists
/// (`scripts/readme-files.py`): a rename that leaves the README behind fails here.
@Suite(.timeLimit(.minutes(1)))
struct ReadmeFilesTests {
    @Test func everySwiftFileTheReadmeNamesExists() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "scripts/readme-files.py"]
        process.currentDirectoryURL = root
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "README.md names files that are not in the tree:\n\(text)")
    }
}
