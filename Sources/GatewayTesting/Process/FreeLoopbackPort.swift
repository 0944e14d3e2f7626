import Foundation

/// A TCP port on 127.0.0.1 nothing listens on now (bound to port 0, read
/// back, released), for a child process that cannot report the port it
/// bound itself (nghttpd, nginx, PostgreSQL).
public func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw FreeLoopbackPortError(description: "socket() failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw FreeLoopbackPortError(description: "bind() failed") }
    return Int(UInt16(bigEndian: address.sin_port))
}

public struct FreeLoopbackPortError: Error, CustomStringConvertible {
    public let description: String
}
