import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where tests put their files: one folder per test process in the system's
/// temporary directory (`gateway-tests-PID`), removed when the process exits.
/// A run that was killed leaves its folder; the next process removes every
/// folder whose process is gone. So test runs leave nothing in /tmp.
///
/// ```swift
/// let dir = try TestScratch.directory("gateway-har")      // made
/// let config = TestScratch.path("gw", suffix: ".yaml")     // a name only
/// ```
public enum TestScratch {
    static let folderPrefix = "gateway-tests-"

    /// This process's folder: made, and its removal at exit registered, on first use.
    /// Mode 0755: an unprivileged gateway a test starts reaches the folders it is handed.
    public static let root: String = {
        let temporary = NSTemporaryDirectory()
        removeAbandonedFolders(in: temporary)
        let path = (temporary as NSString).appendingPathComponent("\(folderPrefix)\(getpid())")
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        chmod(path, 0o755)
        atexit { try? FileManager.default.removeItem(atPath: TestScratch.root) }
        return path
    }()

    /// A new, unique path in this process's folder, `prefix-UUID` then `suffix`;
    /// nothing is made there.
    public static func path(_ prefix: String, suffix: String = "") -> String {
        (root as NSString).appendingPathComponent("\(prefix)-\(UUID().uuidString)\(suffix)")
    }

    /// A new, empty folder in this process's folder: `prefix-UUID`, with `permissions`
    /// (an octal mode such as `0o700`) or the umask's default.
    public static func directory(_ prefix: String, permissions: Int? = nil) throws -> String {
        let path = path(prefix)
        let attributes: [FileAttributeKey: Any]? = permissions.map { [.posixPermissions: $0] }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: attributes)
        return path
    }

    /// Removes the folders of test processes that no longer run (killed before their exit).
    static func removeAbandonedFolders(in temporary: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
        for name in names where name.hasPrefix(folderPrefix) {
            guard let pid = pid_t(name.dropFirst(folderPrefix.count)), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(atPath: (temporary as NSString).appendingPathComponent(name))
            }
        }
    }
}
