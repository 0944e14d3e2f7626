import ArgumentParser
import Foundation
import GatewayCore
import GatewayObservability

/// `gateway faults|mocks|replay|record on|off|reset|list [--upstream NAME]`: switches
/// a running gateway's faults, mocks, replay or recording without a restart and without
/// touching its config file (through its admin port: ``AdminRoutes``), or
/// lists what each upstream has and whether it acts now.
struct InjectionArguments: ParsableArguments {
    @Argument(help: "on, off, reset (back to the config's enabled), or list.")
    var action: InjectionAction

    @Option(name: .long, help: "Only this upstream (default: every upstream that configures them).")
    var upstream: String?

    @Flag(name: .long, help: "Print the admin port's JSON (/injection) instead of the text.")
    var json = false

    @OptionGroup var address: AdminAddress

    func validate() throws {
        if action == .list, upstream != nil { throw ValidationError("list shows every upstream; --upstream goes with on, off and reset") }
    }

    func run(_ kind: InjectionSwitches.Kind) async throws {
        let admin = try address.url()
        let (host, port) = try AdminAddress.parse(admin)
        var path = "/injection"
        let response: AdminClient.Response
        do {
            if action == .list {
                response = try await AdminClient.get(host: host, port: port, path: path)
            } else {
                path += "/\(kind.rawValue)/\(action.rawValue)"
                if let upstream { path += "?upstream=" + (upstream.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? upstream) }
                response = try await AdminClient.post(host: host, port: port, path: path)
            }
        } catch {
            throw CommandFailure("\(error)")
        }
        guard response.status == 200 else {
            let body = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            throw CommandFailure(body?["message"] as? String ?? "\(admin)\(path) answered HTTP \(response.status)")
        }
        if json {
            print(String(decoding: response.body, as: UTF8.self), terminator: "")
            return
        }
        let report = try InjectionReport.decode(response.body)
        // A rule's endpoint or a file name with a control character shows it escaped, never acts on the terminal.
        for line in report.listing(kind).split(separator: "\n") { print(TerminalSafety.escaped(String(line))) }
    }
}

enum InjectionAction: String, ExpressibleByArgument, CaseIterable {
    case on, off, reset, list
}

/// `gateway faults`, `gateway mocks`, `gateway replay`: one command, named by its kind.
struct InjectionCommand<Kind: InjectionCommandKind>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: Kind.kind.rawValue,
            abstract: Kind.abstract,
            discussion: "Through the admin port; the config file is not changed, and a config reload keeps the switch. reset: as the config says."
        )
    }

    @OptionGroup var arguments: InjectionArguments

    func run() async throws { try await arguments.run(Kind.kind) }
}

protocol InjectionCommandKind {
    static var kind: InjectionSwitches.Kind { get }
    static var abstract: String { get }
}

enum FaultsKind: InjectionCommandKind {
    static let kind = InjectionSwitches.Kind.faults
    static let abstract = "Switch a running gateway's fault injection on or off, or list its fault rules (kind, rate, toward, seed)."
}

enum MocksKind: InjectionCommandKind {
    static let kind = InjectionSwitches.Kind.mocks
    static let abstract = "Switch a running gateway's mocks on or off, or list its mock rules."
}

enum RecordKind: InjectionCommandKind {
    static let kind = InjectionSwitches.Kind.record
    static let abstract = "Switch a running gateway's recording to HAR on or off, or show where it records."
}

enum ReplayKind: InjectionCommandKind {
    static let kind = InjectionSwitches.Kind.replay
    static let abstract = "Switch a running gateway's HAR replay on or off, or show what it replays."
}
