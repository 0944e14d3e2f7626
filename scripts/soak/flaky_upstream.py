#!/usr/bin/env python3
"""A deliberately unreliable HTTP origin for scripts/soak.sh (loopback only).

Each request draws one behaviour: 200 with a 1 KiB body (most), 503 with
Retry-After: 0, 429 with Retry-After: 1, a stall before answering, a reset
(RST, no answer), a body cut short, or a slow body. Counts go to stdout on exit.
"""
import random
import signal
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BODY = b"x" * 1024
COUNTS = {}
LOCK = threading.Lock()
BEHAVIOURS = [("ok", 70), ("503", 8), ("429", 4), ("stall", 5), ("reset", 5), ("cut", 4), ("slow", 4)]


def draw():
    roll = random.uniform(0, sum(w for _, w in BEHAVIOURS))
    for name, weight in BEHAVIOURS:
        roll -= weight
        if roll <= 0:
            return name
    return "ok"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        behaviour = draw()
        with LOCK:
            COUNTS[behaviour] = COUNTS.get(behaviour, 0) + 1
        if behaviour == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            return
        if behaviour == "stall":
            time.sleep(2.5)
        if behaviour in ("503", "429"):
            self.send_response(int(behaviour))
            self.send_header("Retry-After", "0" if behaviour == "503" else "1")
            self.send_header("Content-Length", "4")
            self.end_headers()
            self.wfile.write(b"busy")
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        if behaviour == "cut":
            self.wfile.write(BODY[:100])
            self.close_connection = True
            return
        if behaviour == "slow":
            for i in range(0, len(BODY), 256):
                self.wfile.write(BODY[i:i + 256])
                self.wfile.flush()
                time.sleep(0.05)
            return
        self.wfile.write(BODY)


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client (the gateway) going away mid-answer is part of the test


def main():
    port = int(sys.argv[1])
    server = QuietServer(("127.0.0.1", port), Handler)

    def stop(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        print("origin behaviours:", dict(sorted(COUNTS.items())), flush=True)


if __name__ == "__main__":
    main()
