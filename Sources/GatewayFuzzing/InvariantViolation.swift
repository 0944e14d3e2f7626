/// An input that breaks a property one of the fuzz targets checks.
public struct InvariantViolation: Error, Sendable, CustomStringConvertible {
    public var target: FuzzTarget
    public var message: String

    public init(_ target: FuzzTarget, _ message: String) {
        self.target = target
        self.message = message
    }

    public var description: String { "\(target.rawValue): \(message)" }

    /// Throws `message` for `target` unless `condition` holds.
    static func require(_ condition: Bool, _ target: FuzzTarget, _ message: @autoclosure () -> String) throws(InvariantViolation) {
        if !condition { throw InvariantViolation(target, message()) }
    }
}
