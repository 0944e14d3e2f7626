import Foundation

/// A throwaway PostgreSQL server for tests: `initdb` in a temporary
/// directory, `pg_ctl start` on a free loopback port, `stop()` removes it.
/// The server refuses to run as root, so as root (CI) every command runs as
/// the `postgres` user (`runuser`), which owns the directory. Trust
/// authentication on loopback only; the database is `gateway`.
public final class PostgresTestCluster: Sendable {
    public let directory: String
    public let port: Int
    public let binDirectory: String
    /// With TLS: the server's certificate chain and key files (in the cluster directory, owned by the server).
    public let tlsFiles: (chain: String, key: String)?
    public static let user = "gateway"
    public static let database = "gateway"

    /// `postgres://gateway:pw@127.0.0.1:PORT/gateway` (the password is ignored: trust auth).
    public var url: String { "postgres://\(Self.user):test-pw-9x@127.0.0.1:\(port)/\(Self.database)" }

    /// The directory of `initdb`/`pg_ctl`: on PATH, or Debian's `/usr/lib/postgresql/N/bin`.
    public static func findBinDirectory() -> String? {
        if let initdb = which("initdb") {
            // Debian links a few of the programs into /usr/bin; the directory they link to has them all.
            let resolved = URL(fileURLWithPath: initdb).resolvingSymlinksInPath().deletingLastPathComponent().path
            if FileManager.default.isExecutableFile(atPath: "\(resolved)/postgres"), FileManager.default.isExecutableFile(atPath: "\(resolved)/pg_isready") {
                return resolved
            }
        }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }
        for version in versions where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") {
            return "\(root)/\(version)/bin"
        }
        return nil
    }

    /// Creates and starts a cluster. Throws when PostgreSQL is not installed (`.ci/run` installs it).
    /// - Parameter tls: PEM certificate chain and private key: the server then accepts TLS (`ssl=on`).
    public static func start(tls: (chainPEM: String, keyPEM: String)? = nil) async throws -> PostgresTestCluster {
        guard let bin = findBinDirectory() else { throw PostgresTestClusterError("PostgreSQL is not installed (apt-get install postgresql)") }
        let directory = NSTemporaryDirectory() + "gateway-pg-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var tlsFiles: (chain: String, key: String)?
        if let tls {
            let files = (chain: "\(directory)/server.crt", key: "\(directory)/server.key")
            try tls.chainPEM.write(toFile: files.chain, atomically: true, encoding: .utf8)
            try tls.keyPEM.write(toFile: files.key, atomically: true, encoding: .utf8)
            chmod(files.key, 0o600)
            tlsFiles = files
        }
        let cluster = PostgresTestCluster(directory: directory, port: try freeLoopbackPort(), binDirectory: bin, tlsFiles: tlsFiles)
        if getuid() == 0 {
            _ = try await ProcessRunner.run("chown", ["-R", "postgres:postgres", directory])
        }
        let initdb = try await cluster.runAsOwner("\(bin)/initdb", ["-D", "\(directory)/data", "-U", user, "--auth=trust", "-E", "UTF8", "--no-sync"], timeout: .seconds(120))
        guard initdb.succeeded else { throw PostgresTestClusterError("initdb failed: \(initdb.stderrString)") }
        try await cluster.startServer()
        let created = try await cluster.runAsOwner("\(bin)/createdb", ["-h", "127.0.0.1", "-p", String(cluster.port), "-U", user, database])
        guard created.succeeded else { throw PostgresTestClusterError("createdb failed: \(created.stderrString)") }
        return cluster
    }

    private init(directory: String, port: Int, binDirectory: String, tlsFiles: (chain: String, key: String)?) {
        self.directory = directory
        self.port = port
        self.binDirectory = binDirectory
        self.tlsFiles = tlsFiles
    }

    /// Starts the server (again, after ``stopServer()``), on the same port and data:
    /// `postgres` runs in the foreground as a child of this process (`pg_ctl -w`
    /// never returns under the test runner), its output in `server.log`.
    public func startServer() async throws {
        let logPath = "\(directory)/server.log"
        if !FileManager.default.fileExists(atPath: logPath) { _ = FileManager.default.createFile(atPath: logPath, contents: nil) }
        guard let log = FileHandle(forWritingAtPath: logPath) else { throw PostgresTestClusterError("cannot open \(logPath)") }
        log.seekToEndOfFile()
        var arguments = [
            "\(binDirectory)/postgres", "-D", "\(directory)/data", "-p", String(port), "-c", "listen_addresses=127.0.0.1",
            "-k", directory, "-c", "fsync=off", "-c", "max_connections=100",
        ]
        if let tlsFiles {
            arguments += ["-c", "ssl=on", "-c", "ssl_cert_file=\(tlsFiles.chain)", "-c", "ssl_key_file=\(tlsFiles.key)"]
        }
        let process = Process()
        if getuid() == 0 {
            process.executableURL = URL(fileURLWithPath: which("runuser") ?? "/usr/sbin/runuser")
            process.arguments = ["-u", "postgres", "--"] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: arguments[0])
            process.arguments = Array(arguments.dropFirst())
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try ProcessRunner.launch(process)
        try? log.close()
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let ready = try await runAsOwner("\(binDirectory)/pg_isready", ["-h", "127.0.0.1", "-p", String(port), "-t", "1"], timeout: .seconds(5))
            if ready.succeeded { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        throw PostgresTestClusterError("postgres did not start: \(text.suffix(2000))")
    }

    /// Stops the server at once (SIGQUIT, PostgreSQL's immediate shutdown:
    /// connections are cut, as in a crash); returns once it is gone.
    public func stopServer() async throws {
        let pidFile = "\(directory)/data/postmaster.pid"
        guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
            let pid = text.split(separator: "\n").first.flatMap({ Int32($0) })
        else { return }
        kill(pid, SIGQUIT)
        let deadline = ContinuousClock.now + .seconds(30)
        while kill(pid, 0) == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        try? FileManager.default.removeItem(atPath: pidFile)
    }

    /// Runs SQL with `psql` (as the test user); returns its output (unaligned, tuples only).
    public func psql(_ sql: String) async throws -> String {
        let result = try await runAsOwner(
            "\(binDirectory)/psql", ["-h", "127.0.0.1", "-p", String(port), "-U", Self.user, "-d", Self.database, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql]
        )
        guard result.succeeded else { throw PostgresTestClusterError("psql failed: \(result.stderrString)") }
        return result.stdoutString.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// From now on, TCP logins need the password of ``url`` (`scram-sha-256`
    /// in `pg_hba.conf`, reloaded); ``psql(_:)`` no longer logs in after it.
    public func requirePassword() async throws {
        let password = "test-pw-9x"
        _ = try await psql("ALTER USER \(Self.user) PASSWORD '\(password)'")
        let hba = "\(directory)/data/pg_hba.conf"
        let rules = try String(contentsOfFile: hba, encoding: .utf8)
        let strict = rules.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("host") ? line.replacingOccurrences(of: " trust", with: " scram-sha-256") : String(line)
        }
        try strict.joined(separator: "\n").write(toFile: hba, atomically: false, encoding: .utf8)
        let reloaded = try await runAsOwner("\(binDirectory)/pg_ctl", ["reload", "-D", "\(directory)/data"])
        guard reloaded.succeeded else { throw PostgresTestClusterError("pg_ctl reload failed: \(reloaded.stderrString)") }
    }

    /// Stops the server and removes its directory.
    public func stop() async {
        try? await stopServer()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func runAsOwner(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(30)) async throws -> ProcessResult {
        if getuid() == 0 {
            return try await ProcessRunner.run("runuser", ["-u", "postgres", "--", executable] + arguments, timeout: timeout)
        }
        return try await ProcessRunner.run(executable, arguments, timeout: timeout)
    }
}

public struct PostgresTestClusterError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
