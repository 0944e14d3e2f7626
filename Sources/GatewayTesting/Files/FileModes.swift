#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers

/// File modes in tests. The umask belongs to the whole test process (every
/// suite, and every child process spawned meanwhile), so ``withUmask(_:_:)``
/// lets one caller at a time change it and always puts the previous one back.
public enum FileModes {
    private static let umaskLock = NIOLock()

    /// Runs `body` (synchronously: no suspension point may hold the umask)
    /// with the process umask set to `mask`, then restores the previous umask,
    /// also when `body` throws. With the default 0 nothing is masked: a file or
    /// directory gets exactly the mode the code asked `open(2)` or `mkdir(2)`
    /// for, so a mode that relies on the usual umask 022 shows as 0666 or 0777.
    /// Not to be nested (the lock is not recursive).
    public static func withUmask<T>(_ mask: Int = 0, _ body: () throws -> T) rethrows -> T {
        try umaskLock.withLock {
            let previous = umask(mode_t(mask))
            defer { _ = umask(previous) }
            return try body()
        }
    }

    /// The permission bits (`0o7777`) of `path` itself (`lstat`: a symlink is
    /// not followed), or nil when nothing is there.
    public static func permissions(_ path: String) -> Int? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return Int(info.st_mode) & 0o7777
    }

    /// True when `path` itself is a symbolic link.
    public static func isSymbolicLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && Int(info.st_mode) & 0o170000 == 0o120000
    }

    /// The permission bits of the file open on `fd` (`fstat`), or nil.
    public static func permissions(ofDescriptor fd: Int32) -> Int? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return Int(info.st_mode) & 0o7777
    }
}
