import ArgumentParser
import Foundation
import GatewayUpstream
import NIOPosix

/// `gateway pins host[:port]`: show a server's chain and the pins to configure.
struct PinsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pins",
        abstract: "Connect to HOST[:PORT] and print each certificate's SPKI SHA-256 pin and a config snippet.",
        discussion: "The chain is shown even when it does not verify (the output says so). Pins are public-key hashes, not secrets."
    )

    @Argument(help: "host or host:port (default port 443).")
    var target: String

    @Option(name: .long, help: "PEM bundle of trusted roots used to verify the chain (default: the system bundle).")
    var caFile: String?

    @Option(name: .long, help: "Upstream name for the config snippet (default: the host).")
    var name: String?

    func run() async throws {
        let (host, port) = try Self.split(target)
        do {
            let inspection = try await PinInspector.inspect(
                host: host, port: port, caFile: caFile, eventLoopGroup: MultiThreadedEventLoopGroup.singleton
            )
            print(inspection.render(upstreamName: name), terminator: "")
        } catch {
            FileHandle.standardError.write(Data("gateway pins: could not inspect \(host):\(port): \(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    static func split(_ target: String) throws -> (String, Int) {
        if target.hasPrefix("[") {
            guard let close = target.firstIndex(of: "]") else { throw ValidationError("malformed IPv6 address: \(target)") }
            let host = String(target[target.index(after: target.startIndex)..<close])
            let rest = target[target.index(after: close)...]
            guard !rest.isEmpty else { return (host, 443) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else {
                throw ValidationError("malformed port in \(target)")
            }
            return (host, port)
        }
        let parts = target.split(separator: ":")
        switch parts.count {
        case 1:
            return (target, 443)
        case 2:
            guard let port = Int(parts[1]), (1...65535).contains(port) else { throw ValidationError("malformed port in \(target)") }
            return (String(parts[0]), port)
        default:
            throw ValidationError("expected host or host:port, got \(target)")
        }
    }
}
