import Foundation
@testable import GatewayCore
import GatewayTesting
import Testing

/// Files holding request data or secrets are private from their first byte
/// (mode 0600 at creation, not narrowed after), in directories created 0700,
/// and nothing planted at a path they use is followed. The umask is 0 while
/// they are written, so a mode left to the usual umask would show.
@Suite(.timeLimit(.minutes(1)))
struct PrivateFileTests {
    /// A fresh directory (the usual mode: only what is created under it is checked).
    static func tempDir() throws -> String {
        let dir = TestScratch.path("private-file")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    static func contents(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func filesAre0600AndTheDirectoriesMadeForThem0700WhateverTheUmask() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = "\(dir)/state/bodies/r1.bin"
        try FileModes.withUmask(0) {
            try PrivateFile.write(Array("body".utf8), to: file)
        }
        #expect(FileModes.permissions(file) == 0o600)
        #expect(FileModes.permissions("\(dir)/state") == 0o700)
        #expect(FileModes.permissions("\(dir)/state/bodies") == 0o700)
        #expect(Self.contents(file) == "body")
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(dir)/state/bodies") == ["r1.bin"], "no temporary file left")
    }

    /// The mode is set when the file is created: the descriptor shows 0600 before a byte is written.
    @Test func aCreatedFileIs0600BeforeItsFirstByte() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fd = try FileModes.withUmask(0) { try PrivateFile.create("\(dir)/new.bin") }
        defer { close(fd) }
        #expect(FileModes.permissions(ofDescriptor: fd) == 0o600)
        #expect(FileModes.permissions("\(dir)/new.bin") == 0o600)
    }

    /// A umask that takes the owner's bits away does not either: the mode is exactly the one asked for.
    @Test func theModeIsExactUnderARestrictiveUmask() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileModes.withUmask(0o377) {
            try PrivateFile.write(Array("x".utf8), to: "\(dir)/token.json")
        }
        #expect(FileModes.permissions("\(dir)/token.json") == 0o600)
        #expect(Self.contents("\(dir)/token.json") == "x")
    }

    /// Another local user plants a symlink where the temporary file will be:
    /// creation refuses it (`O_EXCL`, `O_NOFOLLOW`) and takes another name; the
    /// symlink's target is neither written nor widened.
    @Test func aSymlinkAtTheTemporaryPathIsNotFollowed() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let victim = "\(dir)/victim"
        try Data("original".utf8).write(to: URL(fileURLWithPath: victim))
        chmod(victim, 0o644)
        let planted = "\(dir)/.out.tmp.planted"
        try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: victim)
        var names = [planted, "\(dir)/.out.tmp.fresh"]
        try FileModes.withUmask(0) {
            try PrivateFile.write(
                Array("secret".utf8), to: "\(dir)/out", permissions: PrivateFile.defaultPermissions, durable: false,
                temporaryPath: { _ in names.removeFirst() }
            )
        }
        #expect(names.isEmpty, "the planted name was passed over for the next one")
        #expect(Self.contents(victim) == "original")
        #expect(FileModes.permissions(victim) == 0o644)
        #expect(FileModes.isSymbolicLink(planted))
        #expect(Self.contents("\(dir)/out") == "secret")
        #expect(FileModes.permissions("\(dir)/out") == 0o600)
    }

    /// `create` refuses anything at its path, a symlink (even a dangling one) included.
    @Test func createRefusesASymlinkEvenADanglingOne() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let link = "\(dir)/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "\(dir)/target")
        do {
            let fd = try PrivateFile.create(link)
            close(fd)
            Issue.record("created through a symlink")
        } catch let error as PrivateFileError {
            #expect(error.errno == EEXIST)
            #expect(error.operation == "create")
        }
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/target"), "the link's target was not created")
    }

    /// A symlink at the destination is replaced by the file (the rename), never written through.
    @Test func aSymlinkAtTheDestinationIsReplacedNotFollowed() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let victim = "\(dir)/victim"
        try Data("original".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: "\(dir)/export.har", withDestinationPath: victim)
        try PrivateFile.write(Array("har".utf8), to: "\(dir)/export.har")
        #expect(!FileModes.isSymbolicLink("\(dir)/export.har"))
        #expect(Self.contents("\(dir)/export.har") == "har")
        #expect(Self.contents(victim) == "original")
    }

    /// Directories that exist are used as they are (the operator's choice);
    /// a file where a directory should be is an error naming the path.
    @Test func existingDirectoriesAreLeftAsTheyAre() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        mkdir("\(dir)/shared", 0o755)
        chmod("\(dir)/shared", 0o755)
        try PrivateFile.write(Array("x".utf8), to: "\(dir)/shared/file")
        #expect(FileModes.permissions("\(dir)/shared") == 0o755)
        #expect(FileModes.permissions("\(dir)/shared/file") == 0o600)

        try Data("x".utf8).write(to: URL(fileURLWithPath: "\(dir)/plain"))
        do {
            try PrivateFile.createDirectory("\(dir)/plain")
            Issue.record("a file was taken for a directory")
        } catch let error as PrivateFileError {
            #expect(error.errno == ENOTDIR)
            #expect("\(error)".contains("\(dir)/plain"))
        }
    }

    /// A failed rename (a directory is at the destination) leaves no temporary file behind.
    @Test func aFailedWriteLeavesNoTemporaryFile() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: "\(dir)/taken/inside", withIntermediateDirectories: true)
        #expect(throws: PrivateFileError.self) { try PrivateFile.write(Array("x".utf8), to: "\(dir)/taken") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["taken"])
    }

    @Test func temporaryNamesAreHiddenAndNextToTheFile() {
        let name = PrivateFile.temporaryPath(for: "/state/bodies/r1.bin")
        #expect(name.hasPrefix("/state/bodies/.r1.bin.tmp."))
        #expect(PrivateFile.temporaryPath(for: "run.har").hasPrefix("./.run.har.tmp."))
        #expect(PrivateFile.temporaryPath(for: "/top").hasPrefix("/.top.tmp."))
        #expect(PrivateFile.temporaryPath(for: "a") != PrivateFile.temporaryPath(for: "a"))
    }
}
