import Foundation

/// The full path of executable `name` found on `PATH` (like the shell's `which`), or nil.
/// A name containing `/` is returned as is if it is an executable file.
public func which(_ name: String) -> String? {
    let fileManager = FileManager.default
    func isExecutableFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return fileManager.fileExists(atPath: path, isDirectory: &isDirectory)
            && !isDirectory.boolValue
            && fileManager.isExecutableFile(atPath: path)
    }
    guard !name.isEmpty else { return nil }
    if name.contains("/") {
        return isExecutableFile(name) ? name : nil
    }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    for directory in path.split(separator: ":", omittingEmptySubsequences: true) {
        let candidate = directory.hasSuffix("/") ? "\(directory)\(name)" : "\(directory)/\(name)"
        if isExecutableFile(candidate) {
            return candidate
        }
    }
    return nil
}
