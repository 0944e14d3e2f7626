import Foundation

/// The files of one trace as ``TraceWriter`` keeps them: `file` (newest), then
/// its rotated copies `file.1` ... `file.<max_files>` (oldest), and the body
/// files (`<dir>/bodies/<id>.bin`) their records reference.
///
/// Body file retention: a body file lives exactly as long as the trace file
/// holding its record. When rotation deletes the oldest file, the body files
/// of its records are deleted with it (``removeBodies(of:bodiesDirectory:)``).
public enum TraceFiles {
    /// Every trace file that exists, oldest first: `file.N` ... `file.1`, `file`.
    /// Any numeric suffix counts, so files kept under a larger `max_files`
    /// before a restart are still read.
    public static func existing(_ file: String) -> [String] {
        let fm = FileManager.default
        let directory = (file as NSString).deletingLastPathComponent
        let base = (file as NSString).lastPathComponent
        let names = (try? fm.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory)) ?? []
        let rotated = names.compactMap { name -> (index: Int, suffix: String)? in
            guard name.hasPrefix(base + ".") else { return nil }
            let suffix = String(name.dropFirst(base.count + 1))
            guard !suffix.isEmpty, suffix.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let index = Int(suffix), index > 0 else { return nil }
            return (index, suffix)
        }
        var files = rotated.sorted { $0.index > $1.index }.map { "\(file).\($0.suffix)" }
        if fm.fileExists(atPath: file) { files.append(file) }
        return files
    }

    /// The records of every trace file, oldest first; lines that do not decode are skipped.
    public static func records(_ file: String) -> [TraceRecord] {
        existing(file).flatMap { records(inFile: $0) }
    }

    /// The records of one file, in order.
    public static func records(inFile path: String) -> [TraceRecord] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { try? TraceRecord.decode(line: $0) }
    }

    /// `<bodiesDirectory>/<id>.bin`: where the body of record `id` is saved.
    public static func bodyFile(id: String, bodiesDirectory: String) -> String {
        "\(bodiesDirectory)/\(id).bin"
    }

    /// Deletes the body files of the records in trace file `path` (called
    /// just before rotation deletes `path`). Returns how many were deleted.
    /// On the writer thread at every rotation: nothing is read when there are
    /// no body files, and record ids are found by a byte scan, not by decoding
    /// every record (which cost more than writing them).
    @discardableResult
    public static func removeBodies(of path: String, bodiesDirectory: String) -> Int {
        let fm = FileManager.default
        guard let names = try? fm.contentsOfDirectory(atPath: bodiesDirectory), !names.isEmpty,
            let data = fm.contents(atPath: path)
        else { return 0 }
        let bodies = Set(names)
        var removed = 0
        for id in recordIDs(in: Array(data)) where bodies.contains("\(id).bin") {
            if (try? fm.removeItem(atPath: bodyFile(id: id, bodiesDirectory: bodiesDirectory))) != nil { removed += 1 }
        }
        return removed
    }

    /// The `id` of each JSON line in `bytes`: the string after its `,"id":"`
    /// (keys are sorted, `id` is never first; inside strings a quote is
    /// escaped, so the pattern only matches the key itself).
    static func recordIDs(in bytes: [UInt8]) -> [String] {
        let pattern = Array(#","id":""#.utf8)
        var ids: [String] = []
        var lineStart = 0
        while lineStart < bytes.count {
            let lineEnd = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            var i = lineStart
            while i + pattern.count <= lineEnd {
                if bytes[i] == pattern[0], bytes[i..<(i + pattern.count)].elementsEqual(pattern) {
                    let start = i + pattern.count
                    if let end = bytes[start..<lineEnd].firstIndex(of: UInt8(ascii: "\"")) {
                        ids.append(String(decoding: bytes[start..<end], as: UTF8.self))
                    }
                    break
                }
                i += 1
            }
            lineStart = lineEnd + 1
        }
        return ids
    }
}
