"""RSS of the gateway carrying WebSockets (absolute-form handshakes through the proxy).

Phase 1: N idle WebSockets (handshake, 101, then nothing), held for a moment,
then closed. Phase 2: one WebSocket carries TOTAL MiB each way in 1 MiB binary
messages (client to origin, then origin to client) while the gateway's RSS is
sampled every 100 ms. The origin is the `websockets` library (PyPI) on
127.0.0.1. Prints one JSON object (RSS in KiB, summed over the gateway's processes).
"""
import argparse
import asyncio
import base64
import json
import os
import struct
import time

import procstat
from websockets.asyncio.server import serve

MIB = 1 << 20


async def handshake(proxy_port, origin_port, path):
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write((f"GET http://127.0.0.1:{origin_port}{path} HTTP/1.1\r\nHost: 127.0.0.1:{origin_port}\r\n"
                  f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                  "Sec-WebSocket-Version: 13\r\n\r\n").encode())
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if status != 101:
        raise RuntimeError(f"handshake answered {status}")
    return reader, writer


def frame(opcode, payload, mask=b"\x01\x02\x03\x04"):
    n = len(payload)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    key = (mask * (n // 4 + 1))[:n]
    masked = (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(n, "big") if n else b""
    return head + mask + masked


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--proxy-port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--idle", type=int, default=1000)
    ap.add_argument("--total-mib", type=int, default=1024)
    args = ap.parse_args()
    pids = procstat.tree(args.pid)
    received = {"bytes": 0}

    async def origin(ws):
        if ws.request.path == "/down":
            await ws.recv()
            chunk = os.urandom(MIB)
            for _ in range(args.total_mib):
                await ws.send(chunk)
            await ws.wait_closed()
            return
        async for message in ws:
            received["bytes"] += len(message)
            if received["bytes"] >= args.total_mib * MIB:
                await ws.send("done")

    async with serve(origin, "127.0.0.1", 0, max_size=None, ping_interval=None) as server:
        origin_port = server.sockets[0].getsockname()[1]
        result = {"idle_before_kib": procstat.rss_kib(pids)}

        conns = []
        for i in range(args.idle):
            conns.append(await handshake(args.proxy_port, origin_port, f"/idle/{i}"))
        await asyncio.sleep(2)
        result["idle_open"] = len(conns)
        result["idle_rss_kib"] = procstat.rss_kib(pids)
        for _, writer in conns:
            writer.close()
        await asyncio.sleep(2)
        result["idle_after_close_kib"] = procstat.rss_kib(pids)

        samples = []

        async def sample(stop):
            while not stop.is_set():
                samples.append(procstat.rss_kib(pids))
                await asyncio.sleep(0.1)

        stop = asyncio.Event()
        sampler = asyncio.create_task(sample(stop))
        t0 = time.monotonic()
        reader, writer = await handshake(args.proxy_port, origin_port, "/up")
        payload = os.urandom(MIB)
        message = frame(2, payload)
        for _ in range(args.total_mib):
            writer.write(message)
            await writer.drain()
        await reader.readexactly(2 + 4)  # the origin's "done"
        up_s = time.monotonic() - t0
        writer.close()

        t1 = time.monotonic()
        reader, writer = await handshake(args.proxy_port, origin_port, "/down")
        writer.write(frame(1, b"send"))
        await writer.drain()
        got = 0
        want = args.total_mib * (MIB + 10)
        while got < want:
            data = await reader.read(1 << 20)
            if not data:
                break
            got += len(data)
        down_s = time.monotonic() - t1
        writer.close()
        stop.set()
        await sampler
        result.update({
            "stream_mib_each_way": args.total_mib,
            "stream_up_mib_s": round(args.total_mib / up_s, 1),
            "stream_down_mib_s": round(args.total_mib / down_s, 1),
            "stream_first_kib": samples[0] if samples else None,
            "stream_max_kib": max(samples) if samples else None,
            "stream_last_kib": samples[-1] if samples else None,
            "stream_samples": len(samples),
            "down_bytes_read": got,
        })
        print(json.dumps(result))


asyncio.run(main())
