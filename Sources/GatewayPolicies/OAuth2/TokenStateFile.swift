import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `state_dir/<upstream>.json`: the persisted ``OAuth2TokenState`` of one upstream.
///
/// Written atomically: a temporary file in the same directory (mode 0600, created
/// exclusively), written, `fsync`ed, renamed over the old file, then the directory
/// is `fsync`ed. A crash leaves either the old or the new file, never half of one.
/// The directory is created with mode 0700 when missing.
public struct TokenStateFile: Sendable {
    public let directory: String
    public let path: String

    /// - Parameter upstream: the upstream name (`[A-Za-z0-9_-]+`, safe as a file name).
    public init(stateDir: String, upstream: String) {
        self.directory = stateDir
        self.path = (stateDir as NSString).appendingPathComponent("\(upstream).json")
    }

    /// The stored state, or nil when there is no file. Throws when the file
    /// exists but cannot be read or decoded.
    public func load() throws -> OAuth2TokenState? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw TokenStateFileError(path: path, operation: "read", errno: nil)
        }
        do {
            return try JSONDecoder().decode(OAuth2TokenState.self, from: data)
        } catch {
            throw TokenStateFileError(path: path, operation: "decode", errno: nil)
        }
    }

    /// True when the file exists and its group or others have any permission.
    public func isAccessibleByOthers() -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return info.st_mode & 0o077 != 0
    }

    /// Replaces the file with `state`, atomically (see the type's documentation).
    public func save(_ state: OAuth2TokenState) throws {
        try createDirectoryIfMissing()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let bytes = Array(try encoder.encode(state)) + [0x0A]

        let temporary = (directory as NSString).appendingPathComponent(
            ".\((path as NSString).lastPathComponent).tmp.\(getpid()).\(UInt32.random(in: .min ... .max))"
        )
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw TokenStateFileError(path: temporary, operation: "create", errno: errno) }
        var ok = false
        defer {
            if !ok { unlink(temporary) }
        }
        do {
            defer { close(fd) }
            guard fchmod(fd, 0o600) == 0 else { throw TokenStateFileError(path: temporary, operation: "chmod", errno: errno) }
            var written = 0
            while written < bytes.count {
                let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw TokenStateFileError(path: temporary, operation: "write", errno: errno)
                }
                written += n
            }
            guard fsync(fd) == 0 else { throw TokenStateFileError(path: temporary, operation: "fsync", errno: errno) }
        }
        guard rename(temporary, path) == 0 else { throw TokenStateFileError(path: path, operation: "rename", errno: errno) }
        ok = true
        // Make the rename itself durable.
        let dirFD = open(directory, O_RDONLY | O_CLOEXEC)
        if dirFD >= 0 {
            _ = fsync(dirFD)
            close(dirFD)
        }
    }

    /// Creates the state directory (and missing parents) with mode 0700.
    func createDirectoryIfMissing() throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw TokenStateFileError(path: directory, operation: "use as directory", errno: ENOTDIR) }
            return
        }
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw TokenStateFileError(path: directory, operation: "create directory", errno: nil)
        }
        // Attributes apply to the last component; make sure of it whatever the umask.
        chmod(directory, 0o700)
    }
}

/// A state file could not be read or written. Names the path and the failing
/// operation, never the content.
public struct TokenStateFileError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let operation: String
    public let errno: Int32?

    public var description: String {
        var text = "cannot \(operation) token state file \(path)"
        if let errno { text += ": \(String(cString: strerror(errno)))" }
        return text
    }
}
