#!/usr/bin/env python3
"""WebSocket message throughput (the bench's WebSocket rows, issue 57): C connections, each
sending binary messages of one size to ws_sink.py for N seconds, directly or through an HTTP
proxy (the opening handshake as an absolute-form `GET http://ORIGIN/...` with `Upgrade:
websocket`, as a browser or `aiohttp` sends it to a proxy: no CONNECT).

    ws_load.py --target 127.0.0.1:PROXY --origin 127.0.0.1:SINK --size 1024 --connections 1 --seconds 5

Each connection writes a prebuilt buffer of masked frames (about 256 KiB of them, or one
frame of 1 MiB and more) with blocking sendall on a thread of its own (it releases the
GIL), so the client costs a copy into the socket per buffer, not Python per message. When
the time is up each sends a text message `end`, which the sink answers, behind every
frame still in flight, with the messages and bytes it received; the rate is the sink's
count over the time from the first frame to the last answer. The mask key is one per run
(RFC 6455 asks for one per frame; nothing between here and the sink reads it). Prints one
JSON line in H2ProxyLoad's shape (`requests` = messages received, `requests_per_second`)
plus bytes and MB/s, for measure_h2.py. Options --streams is accepted and ignored (the
measuring script passes it to every client).
"""
import argparse
import base64
import hashlib
import json
import os
import socket
import struct
import sys
import threading
import time

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MASK = b"\x5a\x13\xc7\x2e"


def client_frame(opcode, payload, fin=True):
    n = len(payload)
    b0 = (0x80 if fin else 0) | opcode
    if n < 126:
        head = struct.pack("!BB", b0, 0x80 | n)
    elif n < 65536:
        head = struct.pack("!BBH", b0, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", b0, 0x80 | 127, n)
    key = (MASK * (n // 4 + 1))[:n]
    masked = (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(n, "big") if n else b""
    return head + MASK + masked


def recv_exactly(sock, n):
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError(f"closed after {len(out)} of {n} bytes")
        out += chunk
    return bytes(out)


def handshake(args):
    host, port = args.target.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    key = base64.b64encode(os.urandom(16)).decode()
    target = f"http://{args.origin}{args.path}" if args.proxy else args.path
    sock.sendall((f"GET {target} HTTP/1.1\r\nHost: {args.origin}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("closed during the handshake")
        head += chunk
    head, _, rest = head.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    if status != 101:
        raise ConnectionError(f"handshake answered {status}: {rest[:300]!r}")
    if rest:
        raise ConnectionError("bytes after the 101 before any frame was sent")
    accept = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}.get("sec-websocket-accept")
    want = base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()
    if accept != want:
        raise ConnectionError(f"Sec-WebSocket-Accept {accept!r}, expected {want!r}")
    return sock


def read_text(sock):
    b0, b1 = recv_exactly(sock, 2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack("!H", recv_exactly(sock, 2))[0]
    elif n == 127:
        n = struct.unpack("!Q", recv_exactly(sock, 8))[0]
    payload = recv_exactly(sock, n)
    if b0 & 0x0F != 1:
        raise ConnectionError(f"expected a text message, got opcode {b0 & 0x0F}")
    return payload.decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True, help="host:port to connect to (the proxy, or the sink itself)")
    ap.add_argument("--origin", required=True, help="the sink's host:port (the handshake's Host and, via a proxy, URL)")
    ap.add_argument("--proxy", action="store_true", help="--target is an HTTP proxy (absolute-form handshake)")
    ap.add_argument("--path", default="/sink")
    ap.add_argument("--size", type=int, required=True, help="payload bytes per message")
    ap.add_argument("--connections", type=int, default=1)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--streams", type=int, default=1, help="ignored")
    args = ap.parse_args()

    frame = client_frame(2, os.urandom(args.size))
    per_buffer = max(1, (256 << 10) // len(frame))
    buffer = frame * per_buffer
    errors, results = {}, []
    lock = threading.Lock()
    socks = []
    try:
        for _ in range(args.connections):
            socks.append(handshake(args))
    except (OSError, ValueError) as e:
        print(json.dumps({"requests": 0, "requests_per_second": 0, "non2xx": 0, "errors": {"handshake": 1},
                          "error": str(e)}))
        return 1
    start = threading.Barrier(args.connections + 1)
    t0 = [0.0]

    def run(sock):
        sent = 0
        try:
            start.wait()
            deadline = t0[0] + args.seconds
            while time.monotonic() < deadline:
                sock.sendall(buffer)
                sent += per_buffer
            sock.sendall(client_frame(1, b"end"))
            count = json.loads(read_text(sock))
            done = time.monotonic()
            sock.sendall(client_frame(8, struct.pack("!H", 1000)))
            with lock:
                results.append((count, sent, done))
        except (OSError, ValueError) as e:
            with lock:
                errors[type(e).__name__] = errors.get(type(e).__name__, 0) + 1
        finally:
            sock.close()

    threads = [threading.Thread(target=run, args=(s,)) for s in socks]
    for t in threads:
        t.start()
    t0[0] = time.monotonic()
    start.wait()
    for t in threads:
        t.join()
    elapsed = max((done for _, _, done in results), default=time.monotonic()) - t0[0]
    messages = sum(c["messages"] for c, _, _ in results)
    received = sum(c["bytes"] for c, _, _ in results)
    sent = sum(s for _, s, _ in results)
    if messages != sent:
        errors["lost"] = sent - messages
    if received != messages * args.size:
        errors["bytes"] = 1
    print(json.dumps({
        "requests": messages, "requests_per_second": round(messages / elapsed, 1) if elapsed > 0 else 0,
        "bytes": received, "mb_per_s": round(received / elapsed / 1e6, 1) if elapsed > 0 else 0,
        "message_bytes": args.size, "connections": args.connections, "seconds": round(elapsed, 3),
        "non2xx": 0, "errors": errors, "latency_us": {},
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
