/// Python WebSocket clients the WebSocket tests run through the gateway. Each
/// sends `COUNT` messages (text and binary alternating, every hundredth 1 MiB,
/// each carrying its index) while it reads the echoes, checks that every echo
/// comes back whole, of its kind and in order, closes cleanly, and prints one
/// JSON line.
enum WebSocketClientScripts {
    /// `messages(count)`: the list of (is_text, payload) both sides check.
    static let messages = """
        def messages(count):
            out = []
            for i in range(count):
                size = (1 << 20) if i % 100 == 99 else (i * 37) % 3000
                body = (str(i) + ":").encode() + bytes((i + k) % 251 for k in range(min(size, 256))) * (size // 256 + 1)
                body = body[: max(size, len(str(i)) + 1)]
                if i % 2 == 0:
                    out.append((True, body.hex()[: max(size, 8)]))
                else:
                    out.append((False, body))
            return out

        """

    /// A hand-written RFC 6455 client on a plain socket: absolute-form
    /// `GET http://...` with the upgrade fields, masked frames, the accept
    /// key checked. Prints `{"status": N}` for an answer other than 101.
    static let raw = messages + """
        import base64, hashlib, json, os, socket, struct, sys, threading
        count = int(os.environ.get("COUNT", "1000"))
        target = os.environ["TARGET"]
        host = target.split("/")[2]
        s = socket.create_connection(("127.0.0.1", int(os.environ["PROXY_PORT"])), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall(("GET " + target + " HTTP/1.1\\r\\nHost: " + host + "\\r\\nUpgrade: websocket\\r\\nConnection: keep-alive, Upgrade\\r\\n"
                   "Sec-WebSocket-Key: " + key + "\\r\\nSec-WebSocket-Version: 13\\r\\nSec-WebSocket-Protocol: chat, superchat\\r\\n\\r\\n").encode())
        buf = b""
        while b"\\r\\n\\r\\n" not in buf:
            data = s.recv(65536)
            if not data:
                print(json.dumps({"status": None}))
                sys.exit(0)
            buf += data
        head, buf = buf.split(b"\\r\\n\\r\\n", 1)
        lines = head.decode().split("\\r\\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
        if status != 101:
            print(json.dumps({"status": status, "connection": headers.get("connection")}))
            sys.exit(0)
        accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
        assert headers["sec-websocket-accept"] == accept, headers
        assert headers["upgrade"].lower() == "websocket" and "upgrade" in headers["connection"].lower(), headers

        def frame(opcode, payload):
            mask = os.urandom(4)
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

        msgs = messages(count)
        def send():
            for is_text, data in msgs:
                s.sendall(frame(1 if is_text else 2, data.encode() if is_text else data))
        sender = threading.Thread(target=send)
        sender.start()

        def read_frame():
            global buf
            while True:
                if len(buf) >= 2:
                    n = buf[1] & 0x7F
                    at = 2
                    if n == 126:
                        n, at = (struct.unpack("!H", buf[2:4])[0], 4) if len(buf) >= 4 else (None, 0)
                    elif n == 127:
                        n, at = (struct.unpack("!Q", buf[2:10])[0], 10) if len(buf) >= 10 else (None, 0)
                    if n is not None and len(buf) >= at + n:
                        opcode, payload, buf = buf[0] & 0x0F, buf[at:at + n], buf[at + n:]
                        return opcode, payload
                data = s.recv(1 << 20)
                if not data:
                    raise SystemExit("closed mid-stream")
                buf += data

        for i, (is_text, data) in enumerate(msgs):
            opcode, payload = read_frame()
            assert opcode == (1 if is_text else 2), (i, opcode)
            assert payload == (data.encode() if is_text else data), i
        sender.join()
        s.sendall(frame(8, struct.pack("!H", 1000)))
        opcode, payload = read_frame()
        assert opcode == 8, opcode
        print(json.dumps({"status": 101, "protocol": headers.get("sec-websocket-protocol"), "echoed": len(msgs)}))
        """

    /// aiohttp's `ws_connect(..., proxy=...)`: it sends `GET ws://...` to the proxy.
    static let aiohttp = messages + """
        import aiohttp, asyncio, json, os
        async def main():
            msgs = messages(int(os.environ.get("COUNT", "1000")))
            async with aiohttp.ClientSession() as session:
                async with session.ws_connect(os.environ["TARGET"], proxy=os.environ["PROXY"], max_msg_size=0) as ws:
                    async def send():
                        for is_text, data in msgs:
                            if is_text:
                                await ws.send_str(data)
                            else:
                                await ws.send_bytes(data)
                    sender = asyncio.create_task(send())
                    for i, (is_text, data) in enumerate(msgs):
                        m = await ws.receive()
                        assert m.type == (aiohttp.WSMsgType.TEXT if is_text else aiohttp.WSMsgType.BINARY), (i, m.type)
                        assert m.data == data, i
                    await sender
                    await ws.close()
                    print(json.dumps({"echoed": len(msgs), "close_code": ws.close_code}))
        asyncio.run(main())
        """

    /// The `websockets` library with its proxy support (a `CONNECT`, then TLS
    /// with the gateway's leaf when the host is intercepted).
    static let websockets = messages + """
        import asyncio, json, os, ssl
        from websockets.asyncio.client import connect
        async def main():
            msgs = messages(int(os.environ.get("COUNT", "1000")))
            context = ssl.create_default_context(cafile=os.environ["CA"])
            async with connect(os.environ["TARGET"], proxy=os.environ["PROXY"], ssl=context, max_size=None,
                               additional_headers={"X-Client": "websockets"}) as ws:
                async def send():
                    for is_text, data in msgs:
                        await ws.send(data)
                sender = asyncio.create_task(send())
                for i, (is_text, data) in enumerate(msgs):
                    m = await ws.recv()
                    assert m == data, i
                await sender
            print(json.dumps({"echoed": len(msgs)}))
        asyncio.run(main())
        """
}
