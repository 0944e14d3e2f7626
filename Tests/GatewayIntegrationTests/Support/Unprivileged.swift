import Foundation
import GatewayTesting

/// Runs the gateway as an ordinary user would: uid and gid 65534 (`nobody`),
/// no supplementary group, every capability dropped from the effective,
/// inherited and bounding sets (`setpriv`). Tests and CI run as root, and a
/// root-only bug (a socket option that needs `CAP_NET_ADMIN`) reset every
/// connection of every other user while all tests passed.
///
/// The binary is copied into ``directory`` first (the build folder may sit
/// in a home only root can enter), and ``directory`` belongs to that user, so
/// config, certificates and state written there are its own. When the tests
/// themselves are not root, the gateway runs as the caller: already unprivileged.
struct Unprivileged {
    static let uid: UInt32 = 65534

    /// A folder owned by the unprivileged user (mode 0700): put its config and state here.
    let directory: String

    init() throws {
        let path = try TestScratch.directory("gateway-nobody", permissions: 0o700)
        directory = path
        try handOver(path)
    }

    /// Gives `path` (and, for a folder, what it holds) to the unprivileged user.
    func handOver(_ path: String) throws {
        guard getuid() == 0 else { return }
        var entries = [path]
        if let contents = FileManager.default.enumerator(atPath: path) {
            while let entry = contents.nextObject() as? String { entries.append("\(path)/\(entry)") }
        }
        for entry in entries where chown(entry, Self.uid, Self.uid) != 0 {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EPERM)
        }
    }

    /// The executable and leading arguments that run `binary` unprivileged.
    func command(for binary: String) throws -> (String, [String]) {
        let copy = "\(directory)/gateway"
        if !FileManager.default.fileExists(atPath: copy) {
            try FileManager.default.copyItem(atPath: binary, toPath: copy)
            chmod(copy, 0o755)
            try handOver(copy)
        }
        guard getuid() == 0 else { return (copy, []) }
        return ("/usr/bin/setpriv", [
            "--reuid=\(Self.uid)", "--regid=\(Self.uid)", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--", copy,
        ])
    }

    /// `Uid:` and `CapEff:` of a running process, from /proc: what it really runs as.
    static func identity(of pid: Int32) -> (uid: String, effectiveCapabilities: String)? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        var uid: String?
        var caps: String?
        for line in status.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
            if line.hasPrefix("Uid:"), fields.count > 1 { uid = String(fields[1]) }
            if line.hasPrefix("CapEff:"), fields.count > 1 { caps = String(fields[1]) }
        }
        guard let uid, let caps else { return nil }
        return (uid, caps)
    }
}
