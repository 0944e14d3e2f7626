"""RSS of a proxy holding many idle client connections.

Phase 1: open N connections and send nothing. Phase 2: one keep-alive request on
each (read the whole response), then hold them all open. Phase 3: close them.
Prints one JSON object (RSS in KiB, summed over the proxy's processes).
"""
import argparse
import json
import resource
import socket
import time

import procstat


def read_response(sock):
    """Read one HTTP/1.1 response with Content-Length; return the status code."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before response head")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed mid-body")
        rest += chunk
    return status


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--proxy", required=True, help="host:port")
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--url", required=True, help="absolute URL to request once per connection")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--settle", type=float, default=1.0)
    args = ap.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, args.count + 100)), hard))
    host, port = args.proxy.rsplit(":", 1)
    authority = args.url.split("/")[2]
    request = (f"GET {args.url} HTTP/1.1\r\nHost: {authority}\r\n\r\n").encode()
    pids = procstat.tree(args.pid)
    out = {"count": args.count, "rss_before_kib": procstat.rss_kib(pids)}

    socks = []
    deadline = time.monotonic() + 60
    for _ in range(args.count):
        s = socket.create_connection((host, int(port)), timeout=10)
        socks.append(s)
        if time.monotonic() > deadline:
            raise SystemExit("opening connections took over 60 s")
    time.sleep(args.settle)
    out["rss_connected_kib"] = procstat.rss_kib(procstat.tree(args.pid))

    ok = 0
    for s in socks:
        s.sendall(request)
        if 200 <= read_response(s) < 300:
            ok += 1
    time.sleep(args.settle)
    out["ok_responses"] = ok
    out["rss_held_kib"] = procstat.rss_kib(procstat.tree(args.pid))
    alive = 0
    for s in socks:  # still open? a closed socket reads b"" at once
        s.setblocking(False)
        try:
            alive += 1 if s.recv(1) else 0
        except BlockingIOError:
            alive += 1
        except OSError:
            pass
    out["still_open"] = alive

    for s in socks:
        s.close()
    time.sleep(args.settle)
    out["rss_after_close_kib"] = procstat.rss_kib(procstat.tree(args.pid))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
