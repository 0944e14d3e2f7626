import Foundation
import GatewayPolicies
import GatewayTesting
import Testing

/// The token state file (`state_dir/<upstream>.json`, refresh tokens) is
/// written through `PrivateFile`: 0600 from its first byte, `state_dir` and its
/// missing parents made 0700 by `mkdir` (the first version made them 0777 and
/// chmodded the last one after), a symlink at the path replaced, not followed.
@Suite(.timeLimit(.minutes(1)))
struct TokenStateFilePermissionsTests {
    static func tempDir() throws -> String {
        let dir = TestScratch.path("token-state")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func theFileIs0600AndTheStateDirectoryAndItsParents0700() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = TokenStateFile(stateDir: "\(dir)/var/gateway", upstream: "payments")
        try FileModes.withUmask(0) {
            try file.save(OAuth2TokenState(identity: "id", accessToken: "at", refreshToken: "rt"))
        }
        #expect(FileModes.permissions(file.path) == 0o600)
        #expect(FileModes.permissions("\(dir)/var/gateway") == 0o700)
        #expect(FileModes.permissions("\(dir)/var") == 0o700)
        #expect(!file.isAccessibleByOthers())
        #expect(try file.load()?.refreshToken == "rt")
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(dir)/var/gateway") == ["payments.json"])
    }

    @Test func aSymlinkAtTheStateFileIsReplacedNotWrittenThrough() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let victim = "\(dir)/victim"
        try Data("original".utf8).write(to: URL(fileURLWithPath: victim))
        let file = TokenStateFile(stateDir: dir, upstream: "payments")
        try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: victim)
        try file.save(OAuth2TokenState(identity: "id", refreshToken: "rt"))
        #expect(!FileModes.isSymbolicLink(file.path))
        #expect(FileModes.permissions(file.path) == 0o600)
        #expect(FileManager.default.contents(atPath: victim) == Data("original".utf8))
    }

    @Test func aFileWhereTheStateDirectoryShouldBeIsAnError() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("x".utf8).write(to: URL(fileURLWithPath: "\(dir)/state"))
        let file = TokenStateFile(stateDir: "\(dir)/state", upstream: "payments")
        do {
            try file.save(OAuth2TokenState(identity: "id"))
            Issue.record("saved under a file")
        } catch let error as TokenStateFileError {
            #expect(error.description.contains("\(dir)/state"), "\(error)")
            #expect(error.errno == ENOTDIR)
        }
    }
}
