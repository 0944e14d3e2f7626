#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GatewayCore

/// The file side of ``TraceWriter``, used only on its writer thread: lines
/// are collected into one buffer and appended with one `write` per batch (not
/// per record). The file stays open between batches; each batch first checks
/// with one `stat` that the path still names the open file (removed, or moved
/// away by logrotate: it is opened again). Rotation moves `file` → `file.1` →
/// ... → `file.<maxFiles>`, and the file rotated out takes its records' body
/// files with it.
final class TraceFileSink: @unchecked Sendable {
    let file: String
    let maxFileBytes: Int
    let maxFiles: Int
    let bodiesDirectory: String
    /// Bytes in `file` (read again at the start of each batch: the file may have been removed).
    private var size = 0
    private var sizeKnown = false
    private var pending: [UInt8] = []
    private var pendingLines = 0
    private var writtenLines = 0
    /// The open file and its identity (device, inode), or -1.
    private var descriptor: Int32 = -1
    private var openedFile: (device: UInt64, inode: UInt64) = (0, 0)

    init(file: String, maxFileBytes: Int, maxFiles: Int, bodiesDirectory: String) {
        self.file = file
        self.maxFileBytes = maxFileBytes
        self.maxFiles = maxFiles
        self.bodiesDirectory = bodiesDirectory
    }

    /// Adds a line to the batch; when it would take the file past
    /// `maxFileBytes`, the batch so far is written and the file rotated first.
    func append(_ line: [UInt8]) {
        if !sizeKnown {
            var info = stat()
            if stat(file, &info) == 0 {
                size = Int(info.st_size)
                if descriptor >= 0, (UInt64(info.st_dev), UInt64(info.st_ino)) != openedFile { closeFile() }
            } else {
                size = 0
                closeFile()
            }
            sizeKnown = true
        }
        let total = size + pending.count
        if total > 0, total + line.count > maxFileBytes {
            writePending()
            rotate()
        }
        pending.append(contentsOf: line)
        pendingLines += 1
    }

    /// Writes the batch (if any); the next batch reads the file's size again.
    func commit() {
        writePending()
        sizeKnown = false
    }

    /// Lines appended to the file since the last call.
    func takeWrittenLines() -> Int {
        defer { writtenLines = 0 }
        return writtenLines
    }

    private func writePending() {
        guard !pending.isEmpty else { return }
        defer {
            // Keep a modest buffer for the next batch, not the largest one ever seen.
            pending.removeAll(keepingCapacity: pending.capacity <= 1 << 20)
            pendingLines = 0
        }
        guard let fd = openFile() else { return }
        let complete = pending.withUnsafeBytes { Self.writeAll($0, to: fd) }
        guard complete else {
            closeFile()  // opened again for the next batch (e.g. after ENOSPC or EIO)
            return
        }
        size += pending.count
        writtenLines += pendingLines
    }

    /// The open file, opened when needed: created with mode 0600 (never wider,
    /// not even before its first byte), a symlink at its path refused
    /// (`O_NOFOLLOW`), and its missing directories created with mode 0700.
    private func openFile() -> Int32? {
        if descriptor >= 0 { return descriptor }
        let flags = O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC
        var fd = open(file, flags, mode_t(PrivateFile.defaultPermissions))
        if fd < 0, errno == ENOENT {
            let parent = (file as NSString).deletingLastPathComponent
            try? PrivateFile.createDirectory(parent.isEmpty ? "." : parent)
            fd = open(file, flags, mode_t(PrivateFile.defaultPermissions))
        }
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            return nil
        }
        descriptor = fd
        openedFile = (UInt64(info.st_dev), UInt64(info.st_ino))
        return fd
    }

    private func closeFile() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { closeFile() }

    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Bool {
        guard var base = bytes.baseAddress else { return true }
        var remaining = bytes.count
        while remaining > 0 {
            let written = write(fd, base, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            base += written
            remaining -= written
        }
        return true
    }

    private func rotate() {
        closeFile()
        let fm = FileManager.default
        let oldest = "\(file).\(maxFiles)"
        if fm.fileExists(atPath: oldest) {
            TraceFiles.removeBodies(of: oldest, bodiesDirectory: bodiesDirectory)
            try? fm.removeItem(atPath: oldest)
        }
        if maxFiles > 1 {
            for index in stride(from: maxFiles - 1, through: 1, by: -1) where fm.fileExists(atPath: "\(file).\(index)") {
                try? fm.moveItem(atPath: "\(file).\(index)", toPath: "\(file).\(index + 1)")
            }
        }
        try? fm.moveItem(atPath: file, toPath: "\(file).1")
        size = 0
    }

    /// Writes a body file: private from its first byte (``PrivateFile``, mode
    /// 0600), its directory (`bodies/`) created with mode 0700 when missing.
    /// A file that cannot be written is left out (its record is still written).
    static func writeFile(path: String, bytes: [UInt8]) {
        try? PrivateFile.write(bytes, to: path)
    }
}
