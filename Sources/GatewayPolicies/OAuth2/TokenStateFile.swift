import Foundation
import GatewayCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `state_dir/<upstream>.json`: the persisted ``OAuth2TokenState`` of one upstream.
///
/// Written atomically by ``PrivateFile/write(_:to:permissions:durable:)``: a
/// temporary file in the same directory (created exclusively with mode 0600, a
/// symlink there not followed), written, `fsync`ed, renamed over the old file,
/// then the directory is `fsync`ed. A crash leaves either the old or the new
/// file, never half of one. The directory and its missing parents are created
/// with mode 0700 when missing.
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
        do {
            try PrivateFile.write(bytes, to: path, durable: true)
        } catch let error as PrivateFileError {
            throw TokenStateFileError(path: error.path, operation: error.operation, errno: error.errno)
        }
    }

    /// Creates the state directory (and missing parents) with mode 0700; an
    /// existing directory is left as it is.
    func createDirectoryIfMissing() throws {
        do {
            try PrivateFile.createDirectory(directory)
        } catch let error as PrivateFileError {
            throw TokenStateFileError(path: error.path, operation: error.operation, errno: error.errno)
        }
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
