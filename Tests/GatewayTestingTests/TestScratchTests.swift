import Foundation
@testable import GatewayTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Test files go into one folder per process, and the folders of processes
/// that are gone are removed, so test runs leave nothing behind in /tmp.
@Suite struct TestScratchTests {
    @Test func pathsAndFoldersAreInThisProcesssFolder() throws {
        let root = TestScratch.root
        #expect((root as NSString).lastPathComponent == "gateway-tests-\(getpid())")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: root)[.posixPermissions] as? Int)
        #expect(mode == 0o755)

        let file = TestScratch.path("gw", suffix: ".yaml")
        #expect(file.hasPrefix(root + "/gw-") && file.hasSuffix(".yaml"))
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(TestScratch.path("gw") != TestScratch.path("gw"))

        let folder = try TestScratch.directory("private", permissions: 0o700)
        #expect(folder.hasPrefix(root + "/private-"))
        let folderMode = try #require(try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int)
        #expect(folderMode == 0o700)
    }

    @Test func foldersOfProcessesThatAreGoneAreRemoved() async throws {
        let temporary = try TestScratch.directory("abandoned")
        // A process that ran and exited: its PID no longer runs.
        let exited = Process()
        exited.executableURL = URL(fileURLWithPath: "/bin/true")
        try exited.run()
        exited.waitUntilExit()
        let gone = "gateway-tests-\(exited.processIdentifier)"
        let running = ["gateway-tests-1", "gateway-tests-\(getpid())", "other-\(exited.processIdentifier)"]
        for name in [gone] + running {
            try FileManager.default.createDirectory(atPath: "\(temporary)/\(name)", withIntermediateDirectories: false)
        }

        TestScratch.removeAbandonedFolders(in: temporary)

        let left = Set(try FileManager.default.contentsOfDirectory(atPath: temporary))
        #expect(left == Set(running))
    }
}
