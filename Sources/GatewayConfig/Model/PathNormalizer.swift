/// Automatic endpoint templates (metrics labels and per-endpoint rate limits): collapses path segments that look like
/// identifiers into `{id}` so that `/users/42` and `/users/43` are one endpoint.
///
/// A segment becomes `{id}` when it is
/// - all decimal digits (`42`),
/// - a UUID (`123e4567-e89b-12d3-a456-426614174000`, any case),
/// - hexadecimal of 16 characters or more (`5f2b9c0e1a3d4e6f`),
/// - base64/base64url-like of 20 characters or more that mixes letters and digits
///   (`dGhpcyBpcyBhIHRva2Vu0x`): long words and slugs without a digit stay,
/// - longer than 64 characters (whatever it is: it is no route name).
///
/// `.` and `..` segments are resolved first (RFC 3986 §5.2.4, as the origin
/// does): `/x/../users/42` is the endpoint `/users/{id}`, not one of its own.
/// The query is dropped. Pure and allocation-free when nothing changes.
public enum PathNormalizer {
    public static let placeholder = "{id}"
    static let hexMinimum = 16
    static let base64Minimum = 20
    static let segmentMaximum = 64

    /// The template for an origin-form target (`/users/42?x=1` → `/users/{id}`).
    public static func normalize(_ target: Substring) -> String {
        var target = String(target)
        return target.withUTF8 { normalize(path: pathPart(of: $0)) }
    }

    /// The path of an origin-form target's bytes: up to `?` or `#`.
    public static func pathPart(of target: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var end = 0
        while end < target.count, target[end] != UInt8(ascii: "?"), target[end] != UInt8(ascii: "#") { end += 1 }
        return UnsafeBufferPointer(rebasing: target[0..<end])
    }

    /// The template for a path without query (bytes of the request target).
    public static func normalize(path: UnsafeBufferPointer<UInt8>) -> String {
        if path.isEmpty { return "/" }
        // Fast path: nothing to collapse.
        var needsRewrite = false
        forEachSegment(of: path) { segment in
            if !needsRewrite, isIdentifier(segment) || dotSegment(segment) != nil { needsRewrite = true }
        }
        guard needsRewrite else { return String(decoding: path, as: UTF8.self) }
        var result: [UInt8] = []
        result.reserveCapacity(path.count)
        for (index, segment) in resolvingDotSegments(of: path).enumerated() {
            if index > 0 { result.append(UInt8(ascii: "/")) }
            if isIdentifier(segment) {
                result.append(contentsOf: placeholder.utf8)
            } else {
                result.append(contentsOf: segment)
            }
        }
        // A relative path can resolve to nothing (`a/..`): the template is still a path.
        return result.isEmpty ? "/" : String(decoding: result, as: UTF8.self)
    }

    /// The segments of `path` without `.` and `..` (which removes the segment
    /// before it, never the root); a path ending in one of them ends in `/`.
    private static func resolvingDotSegments(of path: UnsafeBufferPointer<UInt8>) -> [UnsafeBufferPointer<UInt8>] {
        var segments: [UnsafeBufferPointer<UInt8>] = []
        let rooted = path.first == UInt8(ascii: "/")
        var endsInDot = false
        forEachSegment(of: path) { segment in
            endsInDot = false
            switch dotSegment(segment) {
            case nil:
                segments.append(segment)
            case .current:
                endsInDot = true
            case .parent:
                if segments.count > (rooted ? 1 : 0) { segments.removeLast() }
                endsInDot = true
            }
        }
        if endsInDot { segments.append(UnsafeBufferPointer(rebasing: path[path.count...])) }
        return segments
    }

    private enum DotSegment { case current, parent }

    private static func dotSegment(_ segment: UnsafeBufferPointer<UInt8>) -> DotSegment? {
        let dot = UInt8(ascii: ".")
        switch segment.count {
        case 1 where segment[0] == dot: return .current
        case 2 where segment[0] == dot && segment[1] == dot: return .parent
        default: return nil
        }
    }

    /// Calls `body` with each segment between slashes, including empty ones (a
    /// leading `/` gives an empty first segment, so joining with `/` restores it).
    private static func forEachSegment(of path: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var start = 0
        for index in 0..<path.count where path[index] == UInt8(ascii: "/") {
            body(UnsafeBufferPointer(rebasing: path[start..<index]))
            start = index + 1
        }
        body(UnsafeBufferPointer(rebasing: path[start..<path.count]))
    }

    /// Whether `segment` is an identifier rather than part of a route.
    static func isIdentifier(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = bytes.count
        if count == 0 { return false }
        if count > segmentMaximum { return true }
        var digits = 0
        var letters = 0
        var hex = 0
        var base64 = 0
        var dashes = 0
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                digits += 1
                hex += 1
                base64 += 1
            case UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"):
                letters += 1
                hex += 1
                base64 += 1
            case UInt8(ascii: "g")...UInt8(ascii: "z"), UInt8(ascii: "G")...UInt8(ascii: "Z"):
                letters += 1
                base64 += 1
            case UInt8(ascii: "-"):
                dashes += 1
                base64 += 1
            case UInt8(ascii: "_"), UInt8(ascii: "+"), UInt8(ascii: "="), UInt8(ascii: "~"),
                UInt8(ascii: ":"), UInt8(ascii: "."):
                // `:` and `.` too: tokens such as `123456:AAH...` or `sk.4eC3...` in a path
                // must become `{id}`, never a metric label.
                base64 += 1
            default:
                break
            }
        }
        if digits == count { return true }
        if hex == count && count >= hexMinimum { return true }
        if count == 36 && dashes == 4 && hex == 32 && isUUID(bytes) { return true }
        if base64 == count && count >= base64Minimum && digits > 0 && letters > 0 { return true }
        return false
    }

    /// 8-4-4-4-12 hex digits.
    private static func isUUID(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var position = 0
        for byte in bytes {
            let isDash = byte == UInt8(ascii: "-")
            if position == 8 || position == 13 || position == 18 || position == 23 {
                if !isDash { return false }
            } else if isDash {
                return false
            }
            position += 1
        }
        return true
    }
}
