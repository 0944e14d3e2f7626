#!/usr/bin/env python3
"""New TLS connections per second (the bench's TLS handshake rows, issue 57): every connection
is new, does one full TLS handshake and one small HTTP/1.1 request, and closes.

    tls_connect_load.py --target 127.0.0.1:PROXY --connect h2.bench.test:443 --ca gateway-ca.pem \
        --connections 16 --seconds 5             # through the gateway's interception
    tls_connect_load.py --target 127.0.0.1:HAPROXY --ca ca.pem --connections 16 --seconds 5   # TLS terminated

With --connect, each connection first sends `CONNECT HOST:PORT` to --target (an HTTP proxy)
and reads its 200; then, on the same socket, TLS (SNI --sni, ALPN http/1.1, the chain
verified against --ca, no session resumed: each handshake is a full one), `GET PATH` with
`Connection: close`, the whole response read (Content-Length), and close.

Why this client: CPython's ssl module is OpenSSL, so the handshake's cryptography runs at C
speed and the GIL is released while it does, and the same client serves every row (a row
through CONNECT differs from one without by that request only; `openssl s_time` and h2load
cannot send CONNECT). It runs --processes processes (default 2) of --connections / processes
threads each, blocking sockets, on the load CPU. Per connection it costs about what the
server side of the handshake costs (the client verifies two ECDSA signatures where the server
makes one), so it can be the bottleneck, with the origin beside it: its CPU's busy share is in
every record, and the proxy's CPU per connection (its CPU time ÷ connections) does not depend
on the client's speed. Measured here (2026-11-28, a busy 2-core VM, OpenSSL 3.0): 870-990 µs
of client CPU per connection straight to nginx, where `openssl s_time -new` spent 850 µs: the
cost is OpenSSL's client handshake, not Python's; a BoringSSL client (H2ProxyLoad with a new
connection per request) might cost less, for a Swift build of Benchmarks/. Prints one JSON line in H2ProxyLoad's shape (`requests` = connections
that completed their request) for measure_h2.py; --streams is accepted and ignored.
"""
import argparse
import json
import multiprocessing
import socket
import ssl
import sys
import threading
import time


def one(args, context, host, port, request):
    """One connection: (status, microseconds, resumed) or raises."""
    t0 = time.perf_counter()
    sock = socket.create_connection((host, port), timeout=10)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if args.connect:
            sock.sendall(f"CONNECT {args.connect} HTTP/1.1\r\nHost: {args.connect}\r\n\r\n".encode())
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = sock.recv(4096)
                if not chunk:
                    raise ConnectionError("proxy closed during CONNECT")
                head += chunk
            if head.split(b" ", 2)[1] != b"200":
                raise ConnectionError(f"CONNECT answered {head.split(b' ', 2)[1].decode()}")
        tls = context.wrap_socket(sock, server_hostname=args.sni)
        sock = tls
        tls.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = tls.recv(65536)
            if not chunk:
                raise ConnectionError("closed before the response head")
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        length = next((int(l.split(":", 1)[1]) for l in lines[1:] if l.lower().startswith("content-length:")), None)
        if length is None:
            raise ConnectionError("response without Content-Length")
        while len(body) < length:
            chunk = tls.recv(65536)
            if not chunk:
                raise ConnectionError("closed before the end of the body")
            body += chunk
        return status, (time.perf_counter() - t0) * 1e6, tls.session_reused
    finally:
        sock.close()


def worker(args, threads, deadline, queue):
    context = ssl.create_default_context(cafile=args.ca)
    context.set_alpn_protocols(["http/1.1"])
    host, port = args.target.rsplit(":", 1)
    request = f"GET {args.path} HTTP/1.1\r\nHost: {args.sni}\r\nConnection: close\r\n\r\n".encode()
    lock = threading.Lock()
    stats = {"ok": 0, "non2xx": 0, "resumed": 0, "errors": {}, "latencies": []}

    def loop():
        while time.monotonic() < deadline:
            try:
                status, us, resumed = one(args, context, host, int(port), request)
            except (OSError, ValueError, IndexError) as e:
                kind = "tls" if isinstance(e, ssl.SSLError) else type(e).__name__
                with lock:
                    stats["errors"][kind] = stats["errors"].get(kind, 0) + 1
                    if len(stats.setdefault("samples", [])) < 3:
                        stats["samples"].append(str(e)[:200])
                continue
            with lock:
                stats["ok"] += 1
                stats["non2xx"] += not 200 <= status < 400
                stats["resumed"] += resumed
                stats["latencies"].append(us)

    ts = [threading.Thread(target=loop) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    queue.put(stats)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True, help="host:port to connect to")
    ap.add_argument("--connect", default="", help="HOST:PORT to CONNECT to first (--target is then an HTTP proxy)")
    ap.add_argument("--sni", default="h2.bench.test", help="TLS server name and Host")
    ap.add_argument("--ca", required=True, help="the CA that signed the server's certificate")
    ap.add_argument("--path", default="/1k")
    ap.add_argument("--connections", type=int, default=16, help="connections in flight")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--streams", type=int, default=1, help="ignored")
    args = ap.parse_args()

    procs = max(1, min(args.processes, args.connections))
    queue = multiprocessing.Queue()
    t0 = time.monotonic()
    deadline = t0 + args.seconds
    ps = [multiprocessing.Process(target=worker, args=(args, args.connections // procs + (i < args.connections % procs),
                                                       deadline, queue)) for i in range(procs)]
    for p in ps:
        p.start()
    parts = [queue.get() for _ in ps]
    for p in ps:
        p.join()
    elapsed = time.monotonic() - t0
    ok = sum(s["ok"] for s in parts)
    errors = {}
    for s in parts:
        for k, v in s["errors"].items():
            errors[k] = errors.get(k, 0) + v
    lat = sorted(x for s in parts for x in s["latencies"])
    pct = (lambda q: round(lat[min(len(lat) - 1, int(q * len(lat)))])) if lat else (lambda q: None)
    print(json.dumps({
        "requests": ok, "requests_per_second": round(ok / elapsed, 1), "seconds": round(elapsed, 3),
        "non2xx": sum(s["non2xx"] for s in parts), "errors": errors, "resumed": sum(s["resumed"] for s in parts),
        "latency_us": {"p50": pct(0.5), "p90": pct(0.9), "p99": pct(0.99)},
        "connections": args.connections, "processes": procs,
        "error_samples": [x for s in parts for x in s.get("samples", [])][:3],
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
