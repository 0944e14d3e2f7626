"""A WebSocket sink for the bench's WebSocket rows (issue 57): counts the messages it receives.

    python3 ws_sink.py PORT

Answers an opening handshake (RFC 6455 §4.2, by hand: GET with `Upgrade: websocket`,
101 with `Sec-WebSocket-Accept`) on any path, then reads frames and counts the binary
messages and their payload bytes. A text message `end` asks for the count: the sink
answers with one text message, a JSON object {"messages": N, "bytes": B}, counted from
the handshake; a close frame is answered with one and the connection closed.

By hand rather than with `websockets` or `aiohttp`: those parse and unmask every frame in
Python and read about 20-50k messages a second, below what the gateway relays, so they
would measure themselves. Here a run of frames of one size (what ws_load.py sends) is
checked a buffer at a time by stepped slices of their header bytes (FIN, opcode, mask
bit, length: C-speed comparisons, no per-frame Python), and a frame of 64 KiB or more
is skipped as it arrives rather than buffered; payloads are not unmasked (the gateway
carries them as bytes, and each frame's length and framing are checked). Any other
frame goes through a general parser.
"""
import asyncio
import base64
import hashlib
import json
import struct
import sys

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
SKIP_AT = 1 << 16


def server_frame(opcode, payload):
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, n)
    elif n < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, n)
    return head + payload


def unmask(key, payload):
    if not key:
        return bytes(payload)
    n = len(payload)
    k = (bytes(key) * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(k, "big")).to_bytes(n, "big") if n else b""


class Sink(asyncio.Protocol):
    def __init__(self):
        self.buf = bytearray()
        self.open = False
        self.skip = 0            # payload bytes of a large frame still to come
        self.skip_fin = False
        self.messages = 0
        self.bytes = 0
        self.run = None          # (frame length, header bytes, payload length) of the last small data frame

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        if not self.open:
            self.buf += data
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buf) > 65536:
                    self.transport.close()
                return
            head = bytes(self.buf[:end]).decode("latin-1").split("\r\n")
            del self.buf[:end + 4]
            fields = {}
            for line in head[1:]:
                name, _, value = line.partition(":")
                fields[name.strip().lower()] = value.strip()
            if not head[0].startswith("GET ") or "websocket" not in fields.get("upgrade", "").lower() \
                    or "sec-websocket-key" not in fields:
                self.transport.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                self.transport.close()
                return
            accept = base64.b64encode(hashlib.sha1(fields["sec-websocket-key"].encode() + GUID).digest()).decode()
            self.transport.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                  f"Sec-WebSocket-Accept: {accept}\r\n\r\n").encode())
            self.open = True
            data, self.buf = bytes(self.buf), bytearray()
            if not data:
                return
        if self.skip:
            n = len(data)
            if n <= self.skip:
                self.skip -= n
                self.bytes += n
                if not self.skip and self.skip_fin:
                    self.messages += 1
                return
            self.bytes += self.skip
            data = data[self.skip:]
            self.skip = 0
            if self.skip_fin:
                self.messages += 1
        self.buf += data
        self.parse()

    def parse(self):
        buf, pos = self.buf, 0
        n = len(buf)
        while n - pos >= 2:
            run = self.run
            if run is not None:
                size, head, length = run
                k = (n - pos) // size
                if k >= 2:
                    end = pos + k * size
                    # The header bytes (all but the mask key) of k frames at once.
                    if all(buf[pos + j:end:size] == head[j:j + 1] * k for j in range(len(head))):
                        self.messages += k
                        self.bytes += k * length
                        pos = end
                        continue
            b0, b1 = buf[pos], buf[pos + 1]
            length, hl = b1 & 0x7F, 2
            if length == 126:
                if n - pos < 4:
                    break
                length, hl = struct.unpack_from("!H", buf, pos + 2)[0], 4
            elif length == 127:
                if n - pos < 10:
                    break
                length, hl = struct.unpack_from("!Q", buf, pos + 2)[0], 10
            key_at = pos + hl
            if b1 & 0x80:
                hl += 4
            if n - pos < hl:
                break
            opcode, fin = b0 & 0x0F, bool(b0 & 0x80)
            avail = n - pos - hl
            if opcode in (0, 2):
                if avail >= length:
                    self.bytes += length
                    self.messages += fin
                    if length < SKIP_AT:
                        self.run = (hl + length, bytes(buf[pos:key_at]), length)
                    pos += hl + length
                    continue
                if length >= SKIP_AT:
                    self.bytes += avail
                    self.skip, self.skip_fin = length - avail, fin
                    pos = n
                    break
                break
            if avail < length:
                break
            payload = unmask(buf[key_at:pos + hl] if b1 & 0x80 else b"", buf[pos + hl:pos + hl + length])
            pos += hl + length
            if opcode == 1 and payload == b"end":
                self.transport.write(server_frame(1, json.dumps({"messages": self.messages, "bytes": self.bytes}).encode()))
            elif opcode == 8:
                self.transport.write(server_frame(8, payload[:2]))
                self.transport.close()
                break
            elif opcode == 9:
                self.transport.write(server_frame(10, payload))
        del buf[:pos]


async def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Sink, "127.0.0.1", port, backlog=1024)
    print(f"ws_sink listening on 127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
