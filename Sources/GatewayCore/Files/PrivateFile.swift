#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Files the gateway writes that hold request data or secrets (trace body
/// files, token state files, the interception CA key, HAR exports) and the
/// directories it creates for them.
///
/// A file is private from its first byte: it is created by `open(2)` with
/// `O_CREAT | O_EXCL | O_NOFOLLOW` and its mode (0600 unless told), never
/// created wider and narrowed after; `O_EXCL` also refuses a symlink or any
/// other file already at that path, so nothing planted there is followed or
/// reused. A directory the gateway creates (and each missing parent) is made
/// by `mkdir(2)` with mode 0700; directories that already exist are left as
/// they are. The umask can only take bits away from these modes.
public enum PrivateFile {
    /// The mode of the files written here unless told otherwise.
    public static let defaultPermissions = 0o600
    /// The mode of the directories created here.
    public static let directoryPermissions = 0o700

    /// Replaces `path` with `bytes`, atomically: a new file in the same directory
    /// (``create(_:permissions:)``, mode exactly `permissions` before the first
    /// byte), written, `fsync`ed when `durable`, renamed over `path` (a symlink
    /// at `path` is replaced, not followed), then, when `durable`, the directory
    /// is `fsync`ed. A crash leaves the old file or the new one, never half of
    /// one. A missing directory (and missing parents) is created with mode 0700.
    public static func write(_ bytes: [UInt8], to path: String, permissions: Int = defaultPermissions, durable: Bool = false) throws {
        try write(bytes, to: path, permissions: permissions, durable: durable, temporaryPath: temporaryPath(for:))
    }

    /// ``write(_:to:permissions:durable:)`` with the temporary names drawn from
    /// `temporaryPath` (tests plant a file at the first one).
    static func write(
        _ bytes: [UInt8], to path: String, permissions: Int, durable: Bool, temporaryPath: (String) -> String
    ) throws {
        let directory = parent(of: path)
        var temporary = temporaryPath(path)
        var fd: Int32 = -1
        var taken = 0
        var directoryCreated = false
        while fd < 0 {
            do {
                fd = try create(temporary, permissions: permissions)
            } catch let error as PrivateFileError where error.errno == EEXIST && taken < 16 {
                // Some file (a leftover, a planted symlink) has that name: another name, never that file.
                taken += 1
                temporary = temporaryPath(path)
            } catch let error as PrivateFileError where error.errno == ENOENT && !directoryCreated {
                directoryCreated = true
                try createDirectory(directory)
            }
        }
        var renamed = false
        defer {
            if !renamed { unlink(temporary) }
        }
        do {
            defer { close(fd) }
            if let errno = writeAll(bytes, to: fd) {
                throw PrivateFileError(path: temporary, operation: "write", errno: errno)
            }
            if durable, fsync(fd) != 0 {
                throw PrivateFileError(path: temporary, operation: "fsync", errno: errno)
            }
        }
        guard rename(temporary, path) == 0 else {
            throw PrivateFileError(path: path, operation: "rename", errno: errno)
        }
        renamed = true
        if durable { syncDirectory(directory) }
    }

    /// Creates `path`, which must not exist (`O_WRONLY | O_CREAT | O_EXCL |
    /// O_NOFOLLOW | O_CLOEXEC`), with mode exactly `permissions` (set on the
    /// descriptor before anything is written, whatever the umask), and returns
    /// its descriptor for the caller to write and close. Throws with `EEXIST`
    /// when anything is at `path`, a symlink included (not followed).
    public static func create(_ path: String, permissions: Int = defaultPermissions) throws -> Int32 {
        var fd: Int32
        repeat {
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(permissions))
        } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw PrivateFileError(path: path, operation: "create", errno: errno) }
        // The umask may have taken bits away (e.g. the owner's read bit): the mode is exactly `permissions`.
        guard fchmod(fd, mode_t(permissions)) == 0 else {
            let code = errno
            close(fd)
            unlink(path)
            throw PrivateFileError(path: path, operation: "chmod", errno: code)
        }
        return fd
    }

    /// Creates directory `path` and its missing parents, each with mode 0700
    /// (`mkdir(2)`, so never wider for a moment). An existing directory (or a
    /// symlink to one) is left as it is; anything else there throws `ENOTDIR`.
    public static func createDirectory(_ path: String) throws {
        if path.isEmpty || path == "." || path == "/" { return }
        var parentCreated = false
        while mkdir(path, mode_t(directoryPermissions)) != 0 {
            let code = errno
            switch code {
            case EINTR:
                continue
            case EEXIST:
                var info = stat()
                // S_IFMT is 0o170000, S_IFDIR 0o040000 (written out: the same on Linux and Darwin).
                guard stat(path, &info) == 0, Int(info.st_mode) & 0o170000 == 0o040000 else {
                    throw PrivateFileError(path: path, operation: "use as directory", errno: ENOTDIR)
                }
                return
            case ENOENT where !parentCreated:
                parentCreated = true
                try createDirectory(parent(of: path))
            default:
                throw PrivateFileError(path: path, operation: "create directory", errno: code)
            }
        }
    }

    /// `.<name>.tmp.<pid>.<random>` next to `path`: dot-prefixed, so nothing listing the directory takes it for a file it wrote.
    static func temporaryPath(for path: String) -> String {
        let directory = parent(of: path)
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        let random = String(UInt64.random(in: .min ... .max), radix: 16)
        return "\(directory == "/" ? "" : directory)/.\(name).tmp.\(getpid()).\(random)"
    }

    /// The directory part of `path`: `.` for a bare name, `/` for a file at the root.
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// Makes a rename in `directory` durable (best effort: some file systems refuse `fsync` on a directory).
    private static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}

/// Writes all of `bytes` to `fd` (again after `EINTR` or a short write);
/// the `errno` of a failed write, or nil. Outside ``PrivateFile``, whose
/// `write` would hide the system call.
private func writeAll(_ bytes: [UInt8], to fd: Int32) -> Int32? {
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            return errno
        }
        if written == 0 { return EIO }
        offset += written
    }
    return nil
}
