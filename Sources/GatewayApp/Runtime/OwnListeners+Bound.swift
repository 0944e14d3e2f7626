import GatewayCore
import GatewayListener
import GatewayObservability
import NIOCore
import NIOPosix

extension OwnListeners {
    /// Records the proxy and admin listeners once each is bound (port 0
    /// resolved), and the machine's interface addresses for a listener on a
    /// wildcard address.
    func record(proxy: ProxyServer, admin: AdminServer) async {
        setLocalAddresses(((try? System.enumerateDevices()) ?? []).compactMap { $0.address?.ipAddress.flatMap(IPAddress.init) })
        for address in [try? await proxy.listeningAddress(), try? await admin.listeningAddress()] {
            guard let address, let port = address.port, let ip = address.ipAddress.flatMap(IPAddress.init) else { continue }
            add(Endpoint(address: ip, port: port))
        }
    }
}
