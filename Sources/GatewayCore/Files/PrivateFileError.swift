#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A ``PrivateFile`` operation failed: names the path, the operation and the
/// system's reason, never the content.
public struct PrivateFileError: Error, Sendable, CustomStringConvertible {
    public let path: String
    /// `create`, `chmod`, `write`, `fsync`, `rename`, `create directory` or `use as directory`.
    public let operation: String
    public let errno: Int32

    public init(path: String, operation: String, errno: Int32) {
        self.path = path
        self.operation = operation
        self.errno = errno
    }

    /// The system's text for ``errno`` (`strerror`).
    public var reason: String { String(cString: strerror(errno)) }

    public var description: String { "cannot \(operation) \(path): \(reason)" }
}
