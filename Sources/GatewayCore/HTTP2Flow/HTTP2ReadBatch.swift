/// A stream of an HTTP/2 connection that its handler drives (no child channel),
/// as a member of its connection's current read.
package protocol HTTP2ReadBatchMember: AnyObject {
    /// In the batch already (set and cleared by ``HTTP2ReadBatch`` only).
    var inReadBatch: Bool { get set }
    /// The connection's read that brought it frames is over.
    func readComplete()
}

/// The streams that got frames in a connection's current read: each hears
/// the read's end once, as a child channel hears `channelReadComplete`.
/// A class: a member's end of read may join another member while the batch
/// runs, which a stored struct's mutating method would not survive (the
/// runtime's exclusivity check).
package final class HTTP2ReadBatch<Member: HTTP2ReadBatchMember> {
    private var members: [Member] = []

    package init() {}

    package func join(_ member: Member) {
        guard !member.inReadBatch else { return }
        member.inReadBatch = true
        members.append(member)
    }

    /// Each member hears the read's end; one that joins meanwhile (a stream's
    /// end of read handed on another's held frames) hears it too.
    package func endRead() {
        var index = 0
        while index < members.count {
            let member = members[index]
            index += 1
            member.inReadBatch = false
            member.readComplete()
        }
        members.removeAll(keepingCapacity: true)
    }
}
