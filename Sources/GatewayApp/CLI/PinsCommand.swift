import ArgumentParser
import Foundation

/// `gateway pins host[:port]`: show a server's chain and the pins to configure.
struct PinsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pins",
        abstract: "Connect to HOST[:PORT] and print each certificate's SPKI SHA-256 pin and a config snippet."
    )

    @Argument(help: "host or host:port (default port 443).")
    var target: String

    @Option(name: .long, help: "PEM bundle of trusted roots used to verify the chain (default: the system bundle).")
    var caFile: String?

    func run() async throws {
        throw ValidationError("not available yet")
    }
}
