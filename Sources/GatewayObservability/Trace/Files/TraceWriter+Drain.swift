public import GatewayCore

/// The writer-thread side of ``TraceWriter``: take the whole queue under the
/// lock, then format and write it outside the lock, in submission order.
extension TraceWriter: WriterThreadWork {
    public func drainOnWriterThread() {
        let items = queue.withLockedValue { q -> [Item] in
            let taken = q.items
            // A buffer of the same size for the next batch: appends on the event loop do not regrow it.
            q.items.removeAll(keepingCapacity: true)
            q.records = 0
            q.scheduled = false
            return taken
        }
        var cost = 0
        for item in items {
            switch item {
            case .record(let entry, let itemCost):
                append(entry)
                cost += itemCost
            case .deferred(let format, let itemCost):
                append(format())
                cost += itemCost
            case .flush(let done):
                settle(&cost)
                done()
            }
        }
        settle(&cost)
    }

    /// Body file first (its record's curl lines name it), then the line into the batch.
    private func append(_ entry: Entry) {
        if let body = entry.body { TraceFileSink.writeFile(path: body.path, bytes: body.bytes) }
        sink.append(entry.line)
        recent?.append(line: entry.line, bodyFile: entry.body)
    }

    /// Writes the batch so far and gives its bytes back to the queue's budget.
    private func settle(_ cost: inout Int) {
        sink.commit()
        let written = sink.takeWrittenLines()
        guard cost > 0 || written > 0 else { return }
        let released = cost
        queue.withLockedValue { q in
            q.bytes -= released
            q.written += written
        }
        cost = 0
    }
}
