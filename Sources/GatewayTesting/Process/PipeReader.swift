package import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a pipe to EOF on a dedicated thread, so a child's large output never fills the pipe
/// and blocks it. The bytes read so far are available at any time. Not
/// `FileHandle.readabilityHandler`: on Linux its dispatch source could still
/// watch the descriptor as it closed, and libdispatch's event loop crashed
/// (`_dispatch_event_loop_drain`, a test process killed by signal 11).
package final class PipeReader: @unchecked Sendable {
    // @unchecked: `handle` is only touched by the reader thread after `init`.
    private let handle: FileHandle
    private let buffer = NIOLockedValueBox<[UInt8]>([])
    /// Fires at EOF (or on a read error).
    package let finished = OneShotSignal()

    package init(_ handle: FileHandle) {
        self.handle = handle
        let thread = Thread { [self] in
            self.readToEnd()
        }
        thread.name = "PipeReader"
        thread.start()
    }

    /// Everything read so far.
    package var bytes: [UInt8] {
        self.buffer.withLockedValue { $0 }
    }

    private func readToEnd() {
        let descriptor = self.handle.fileDescriptor
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { raw in
                read(descriptor, raw.baseAddress, raw.count)
            }
            if count > 0 {
                self.buffer.withLockedValue { $0.append(contentsOf: chunk[..<count]) }
            } else if count < 0, errno == EINTR {
                continue
            } else {
                break
            }
        }
        try? self.handle.close()
        self.finished.fire()
    }
}

/// Writes bytes to a pipe on a dedicated thread, then closes it. A child that exits without
/// reading them ends the write with `EPIPE` (SIGPIPE is ignored by ``ProcessRunner``).
enum PipeWriter {
    static func start(_ handle: FileHandle, bytes: [UInt8]) {
        let box = UncheckedHandle(handle: handle)
        let thread = Thread {
            let descriptor = box.handle.fileDescriptor
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { raw in
                    write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                }
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            try? box.handle.close()
        }
        thread.name = "PipeWriter"
        thread.start()
    }

    private struct UncheckedHandle: @unchecked Sendable {
        let handle: FileHandle
    }
}
