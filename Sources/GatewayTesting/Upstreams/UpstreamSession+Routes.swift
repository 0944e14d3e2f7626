import Foundation
import NIOCore
import NIOHTTP1

extension UpstreamSession {
    /// Largest body `/echo` and `/custom` record; beyond it they answer 413.
    static let recordedBodyLimit = 64 * 1024 * 1024

    /// Answers one request. Returns false if the route closed (or must close) the connection.
    func route(_ head: HTTPRequestHead) async throws -> Bool {
        let target = RequestTarget(head.uri)
        var recorded = RecordedRequest(
            method: head.method.rawValue,
            target: head.uri,
            headers: head.headers.map { [$0.name, $0.value] }
        )
        let path = target.path

        if path.hasPrefix("/echo") {
            guard let body = try await self.collectBody(limit: Self.recordedBodyLimit) else {
                self.state.record(recorded)
                try await self.respond(to: head, status: .payloadTooLarge, body: Array("body too large\n".utf8))
                return true
            }
            recorded.body = body
            self.state.record(recorded)
            try await self.echo(recorded, head: head)
            return true
        }
        if path.hasPrefix("/custom") {
            return try await self.custom(&recorded, head: head)
        }

        self.state.record(recorded)
        if path == "/upload" || path.hasPrefix("/upload/") {
            try await self.upload(head: head)
            return true
        }
        // The remaining routes ignore any request body.
        try await self.drainBody()
        if let code = target.remainder(after: "/status/") {
            try await self.status(code, target: target, head: head)
        } else if let count = target.remainder(after: "/bytes/"), let count = Int(count), count >= 0 {
            try await self.bytes(count, target: target, head: head)
        } else if let delay = target.remainder(after: "/delay/"), let delay = Int(delay), delay >= 0 {
            try await Task.sleep(for: .milliseconds(delay))
            try await self.respond(to: head, status: .ok, headers: [("Content-Type", "text/plain")], body: Array("ok".utf8))
        } else if let count = target.remainder(after: "/reset-after/"), let count = Int(count), count >= 0 {
            try await self.resetAfter(count, head: head)
            return false
        } else if path == "/close-after-head" {
            try await self.writeHead(to: head, status: .ok, headers: ["Content-Length": "100"])
            try? await self.channel.close()
            return false
        } else {
            try await self.respond(to: head, status: .notFound, headers: [("Content-Type", "text/plain")], body: Array("not found\n".utf8))
        }
        return true
    }

    private func echo(_ request: RecordedRequest, head: HTTPRequestHead) async throws {
        let echo = EchoResponseBody(
            method: request.method,
            target: request.target,
            headers: request.headers,
            bodyBase64: Data(request.body).base64EncodedString(),
            bodyLength: request.body.count
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = try encoder.encode(echo)
        try await self.respond(to: head, status: .ok, headers: [("Content-Type", "application/json")], body: Array(json))
    }

    private func custom(_ recorded: inout RecordedRequest, head: HTTPRequestHead) async throws -> Bool {
        guard let body = try await self.collectBody(limit: Self.recordedBodyLimit) else {
            self.state.record(recorded)
            try await self.respond(to: head, status: .payloadTooLarge, body: Array("body too large\n".utf8))
            return true
        }
        recorded.body = body
        self.state.record(recorded)
        guard let responder = self.state.responder else {
            try await self.respond(to: head, status: .notFound, body: Array("no responder\n".utf8))
            return true
        }
        let response = await responder(recorded)
        try await self.respond(
            to: head,
            status: HTTPResponseStatus(statusCode: response.status),
            headers: response.headers,
            body: response.body
        )
        return true
    }

    private func upload(head: HTTPRequestHead) async throws {
        var count = 0
        var checksum: UInt32 = 0
        while let chunk = try await self.nextBodyChunk() {
            count += chunk.readableBytes
            checksum = TestUpstream.checksum(chunk, continuing: checksum)
        }
        let json = try JSONEncoder().encode(UploadResponseBody(bytes: count, checksum: checksum))
        try await self.respond(to: head, status: .ok, headers: [("Content-Type", "application/json")], body: Array(json))
    }

    private func status(_ codeText: String, target: RequestTarget, head: HTTPRequestHead) async throws {
        guard let code = Int(codeText), (100...999).contains(code), code != 101 else {
            try await self.respond(to: head, status: .badRequest, body: Array("bad status code\n".utf8))
            return
        }
        var headers: [(String, String)] = []
        for item in target.values("header") {
            guard let colon = item.firstIndex(of: ":") else { continue }
            let name = item[..<colon].trimmingCharacters(in: .whitespaces)
            let value = item[item.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers.append((name, value))
        }
        let body = Array("status \(code)\n".utf8)
        if code < 200 {
            // An informational response, then a final 200 so the exchange completes.
            try await self.write(.head(HTTPResponseHead(version: head.version, status: HTTPResponseStatus(statusCode: code), headers: HTTPHeaders(headers))))
            try await self.respond(to: head, status: .ok, headers: [("Content-Type", "text/plain")], body: body)
            return
        }
        if Self.statusAllowsBody(UInt(code)) {
            headers.insert(("Content-Type", "text/plain"), at: 0)
        }
        try await self.respond(to: head, status: HTTPResponseStatus(statusCode: code), headers: headers, body: body)
    }

    private func bytes(_ count: Int, target: RequestTarget, head: HTTPRequestHead) async throws {
        let chunkLength = min(max(target.int("chunk", default: 65536), 1), 4 * 1024 * 1024)
        let delay = max(target.int("delay_ms", default: 0), 0)
        let chunked = target.value("chunked") == "1"
        var headers: HTTPHeaders = ["Content-Type": "application/octet-stream"]
        if chunked {
            headers.add(name: "Transfer-Encoding", value: "chunked")
        } else {
            headers.add(name: "Content-Length", value: String(count))
        }
        try await self.writeHead(to: head, status: .ok, headers: headers)
        if head.method != .HEAD {
            let pattern = TestUpstream.patternBuffer(chunkLength: min(chunkLength, count), allocator: self.channel.allocator)
            var offset = 0
            while offset < count {
                let length = min(chunkLength, count - offset)
                let chunk = pattern.getSlice(at: offset % TestUpstream.patternPeriod, length: length)!
                // Suspends while the channel is not writable: memory stays bounded.
                try await self.outbound.write(.body(.byteBuffer(chunk)))
                offset += length
                if delay > 0, offset < count {
                    try await Task.sleep(for: .milliseconds(delay))
                }
            }
        }
        try await self.write(.end(nil))
    }

    private func resetAfter(_ count: Int, head: HTTPRequestHead) async throws {
        try await self.writeHead(to: head, status: .ok, headers: ["Content-Length": String(count * 2)])
        if count > 0 {
            let pattern = TestUpstream.patternBuffer(chunkLength: count, allocator: self.channel.allocator)
            let body = pattern.getSlice(at: 0, length: count)!
            try await self.write(.body(.byteBuffer(body)))
        }
        await self.channel.resetConnection()
    }
}
