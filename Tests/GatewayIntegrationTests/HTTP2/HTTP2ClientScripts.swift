/// Python HTTP/2 clients (the `h2` package from PyPI) that the HTTP/2 tests
/// run through the gateway's interception: a `CONNECT`, TLS trusting the
/// gateway's CA with ALPN `h2`, then frames written by hand. Each prints one
/// JSON line.
enum HTTP2ClientScripts {
    /// Opens the intercepted connection (`sock`, `conn`); `events(timeout)`
    /// yields what arrives until the connection closes (a `ProtocolError` as
    /// itself: Python's h2 takes no frame after a GOAWAY), answering as it goes
    /// unless `reply=False` (writing to a peer that closed makes the kernel
    /// drop what it sent before, its GOAWAY included).
    static let connect = """
        import json, os, socket, ssl, sys, time
        import h2.config, h2.connection, h2.events, h2.exceptions
        host, port = os.environ["HOST"], int(os.environ["PORT"])
        raw = socket.create_connection(("127.0.0.1", int(os.environ["PROXY_PORT"])), timeout=30)
        raw.sendall(("CONNECT %s:%d HTTP/1.1\\r\\nHost: %s:%d\\r\\n\\r\\n" % (host, port, host, port)).encode())
        reply = b""
        while b"\\r\\n\\r\\n" not in reply:
            reply += raw.recv(4096)
        assert b" 200 " in reply.split(b"\\r\\n")[0], reply
        tls = ssl.create_default_context(cafile=os.environ["CA"])
        tls.set_alpn_protocols(["h2"])
        sock = tls.wrap_socket(raw, server_hostname=host)
        assert sock.selected_alpn_protocol() == "h2", sock.selected_alpn_protocol()
        conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, validate_outbound_headers=False, normalize_outbound_headers=False))
        conn.initiate_connection()
        sock.sendall(conn.data_to_send())
        closed = False
        def request_headers(path):
            return [(":method", "GET"), (":scheme", "https"), (":authority", "%s:%d" % (host, port)), (":path", path)]
        def events(timeout, reply=True):
            global closed
            sock.settimeout(timeout)
            try:
                while True:
                    data = sock.recv(65536)
                    if not data:
                        closed = True
                        return
                    try:
                        received = conn.receive_data(data)
                    except h2.exceptions.ProtocolError as error:
                        yield error
                        continue
                    yield from received
                    if reply:
                        sock.sendall(conn.data_to_send())
            except (ConnectionResetError, ssl.SSLError, OSError):
                closed = True

        """

    /// CVE-2023-44487: `COUNT` HEADERS + RST_STREAM pairs as fast as the socket
    /// takes them. Prints how many went before the gateway closed the
    /// connection, whether a GOAWAY came and its error code.
    static let rapidReset = connect + """
        count = int(os.environ.get("COUNT", "10000"))
        sent, goaway, error_code = 0, False, None
        stream_id = 1
        try:
            for i in range(count):
                conn.send_headers(stream_id, request_headers("/echo?i=%d" % i))
                conn.reset_stream(stream_id)
                stream_id += 2
                sent += 1
                if i % 50 == 49:
                    sock.sendall(conn.data_to_send())
            sock.sendall(conn.data_to_send())
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, h2.exceptions.ProtocolError):
            closed = True
        for event in events(10, reply=False):
            if isinstance(event, h2.events.ConnectionTerminated):
                goaway, error_code = True, int(event.error_code)
        print(json.dumps({"sent": sent, "goaway": goaway, "error_code": error_code, "closed": closed}))
        """

    /// Stream 3's status once it ends (a plain GET sent after `prelude`'s stream 1).
    private static func thenStreamThree(_ prelude: String, result: String) -> String {
        connect + prelude + """
            conn.send_headers(3, request_headers("/echo?after=1"), end_stream=True)
            sock.sendall(conn.data_to_send())
            reset, status, ended = None, None, False
            for event in events(10):
                if isinstance(event, h2.events.StreamReset) and event.stream_id == 1:
                    reset = int(event.error_code)
                if isinstance(event, h2.events.ResponseReceived) and event.stream_id == 3:
                    status = int(dict(event.headers)[b":status"])
                if isinstance(event, h2.events.StreamEnded) and event.stream_id == 3:
                    ended = True
                    break
            print(json.dumps(\(result)))
            """
    }

    /// Stream 1 carries a field value with a control byte (HTTP/2 frames it,
    /// HTTP/1.1 forbids it); stream 3 on the same connection is a plain GET.
    /// Prints stream 1's status and `x-gateway-error`, and stream 3's status.
    static let controlByteThenRequest = refusedThenRequest("""
        conn.send_headers(1, request_headers("/echo") + [("x-bad", "a\\x01b")], end_stream=True)
        """)

    /// Stream 1 is a GET with the fields of `EXTRA_FIELDS` (JSON pairs) added
    /// after its own, sent as they are (the client's own checks are off);
    /// stream 3 is a plain GET. Prints as ``controlByteThenRequest``.
    static let extraFieldsThenRequest = refusedThenRequest("""
        conn.send_headers(1, request_headers("/echo") + [tuple(p) for p in json.loads(os.environ["EXTRA_FIELDS"])], end_stream=True)
        """)

    /// A POST that announces `content-length: 10` and never sends its body
    /// (`STALL=body`), or a GET of a large response with the stream's window
    /// shut (`STALL=window`: SETTINGS_INITIAL_WINDOW_SIZE 0, no WINDOW_UPDATE).
    /// Prints stream 1's status, `x-gateway-error`, whether it was reset, and
    /// the seconds until it ended either way.
    static let stalledStream = connect + """
        import h2.settings
        stall = os.environ["STALL"]
        if stall == "window":
            conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
            conn.send_headers(1, request_headers(os.environ["PATH_STALLED"]), end_stream=True)
        else:
            conn.send_headers(1, [(":method", "POST"), (":scheme", "https"), (":authority", "%s:%d" % (host, port)), (":path", "/echo"), ("content-length", "10")])
        sock.sendall(conn.data_to_send())
        started = time.time()
        status, error, reset = None, None, None
        for event in events(30, reply=(stall != "window")):
            if isinstance(event, h2.events.ResponseReceived) and event.stream_id == 1:
                head = dict(event.headers)
                status, error = int(head[b":status"]), head.get(b"x-gateway-error")
            if isinstance(event, h2.events.StreamReset) and event.stream_id == 1:
                reset = int(event.error_code)
                break
            if isinstance(event, h2.events.StreamEnded) and event.stream_id == 1:
                break
            if stall == "window" and isinstance(event, h2.events.RemoteSettingsChanged):
                sock.sendall(conn.data_to_send())
        print(json.dumps({"status": status, "error": error.decode() if error else None, "reset": reset,
                          "seconds": round(time.time() - started, 2)}))
        """

    /// Stream 1's `:authority` names `OTHER_AUTHORITY`, not the CONNECT's
    /// host; stream 3 is a plain GET. Prints stream 1's status and
    /// `x-gateway-error`, and stream 3's status.
    static let otherAuthorityThenRequest = refusedThenRequest("""
        conn.send_headers(1, [(":method", "GET"), (":scheme", "https"), (":authority", os.environ["OTHER_AUTHORITY"]), (":path", "/echo?misdirected=1")], end_stream=True)
        """)

    /// `stream1` opens stream 1 (a request the gateway answers itself); then a
    /// plain GET on stream 3, both read to their end. Prints stream 1's status
    /// and `x-gateway-error`, and stream 3's status.
    private static func refusedThenRequest(_ stream1: String) -> String {
        connect + stream1 + "\n" + """
            conn.send_headers(3, request_headers("/echo?after=1"), end_stream=True)
            sock.sendall(conn.data_to_send())
            heads, ended = {}, set()
            for event in events(10):
                if isinstance(event, h2.events.ResponseReceived):
                    heads[event.stream_id] = dict(event.headers)
                if isinstance(event, h2.events.StreamEnded):
                    ended.add(event.stream_id)
                    if {1, 3} <= ended:
                        break
            first = heads.get(1, {})
            error = first.get(b"x-gateway-error")
            print(json.dumps({"status": int(first[b":status"]) if first else None, "error": error.decode() if error else None,
                              "after": int(heads[3][b":status"]) if 3 in heads else None}))
            """
    }

    /// One stream to `PATH_TO_RESET`, reset after `RESET_AFTER` seconds; then a
    /// second stream on the same connection, read to its end. Prints its status.
    static let resetThenRequest = thenStreamThree("""
        conn.send_headers(1, request_headers(os.environ["PATH_TO_RESET"]), end_stream=True)
        sock.sendall(conn.data_to_send())
        time.sleep(float(os.environ.get("RESET_AFTER", "0.3")))
        conn.reset_stream(1)

        """, result: #"{"status": status, "ended": ended}"#)

    /// Stream 1 breaks its own content-length (`LENGTH` announced, 5 by
    /// default; `BODY` sent, 10 bytes by default, END_STREAM on its HEADERS
    /// when empty); stream 3 on the same connection is a plain GET. Prints how
    /// stream 1 ended (its reset code) and stream 3's status.
    static let badStreamThenRequest = thenStreamThree("""
        body = os.environ.get("BODY", "0123456789").encode()
        conn.send_headers(1, [(":method", "POST"), (":scheme", "https"), (":authority", "%s:%d" % (host, port)), (":path", "/echo"), ("content-length", os.environ.get("LENGTH", "5"))], end_stream=not body)
        if body:
            conn.send_data(1, body, end_stream=True)

        """, result: #"{"reset": reset, "status": status, "ended": ended}"#)

    /// GET `PATH_GET` on stream 1: the status, and each DATA frame of the
    /// response as `[length, 1 if it carries END_STREAM else 0]`, in order.
    static let responseFrames = connect + """
        conn.send_headers(1, request_headers(os.environ["PATH_GET"]), end_stream=True)
        sock.sendall(conn.data_to_send())
        status, ended, frames = None, False, []
        for event in events(20):
            if isinstance(event, h2.events.ResponseReceived):
                status = int(dict(event.headers)[b":status"])
            elif isinstance(event, h2.events.DataReceived):
                frames.append([len(event.data), int(event.stream_ended is not None)])
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                ended = True
                break
        print(json.dumps({"status": status, "ended": ended, "frames": frames}))
        """

    /// One stream to `PATH_SLOW`, read until the connection closes: prints its
    /// status, whether it ended, whether a GOAWAY came (and its last stream
    /// id), whether the connection closed after, and what arrived after the
    /// GOAWAY (`after_goaway`: Python's h2 refuses those frames).
    static let slowRequest = connect + """
        conn.send_headers(1, request_headers(os.environ["PATH_SLOW"]), end_stream=True)
        sock.sendall(conn.data_to_send())
        status, ended, goaway, last_stream, after = None, False, False, None, []
        for event in events(20):
            if goaway or isinstance(event, h2.exceptions.ProtocolError):
                after.append(str(event))
            elif isinstance(event, h2.events.ResponseReceived):
                status = int(dict(event.headers)[b":status"])
            elif isinstance(event, h2.events.StreamEnded):
                ended = True
            elif isinstance(event, h2.events.ConnectionTerminated):
                goaway, last_stream = True, event.last_stream_id
        print(json.dumps({"status": status, "ended": ended, "goaway": goaway, "last_stream": last_stream, "closed": closed, "after_goaway": after}))
        """
}

extension InterceptionTests.Fixture {
    /// What ``HTTP2ClientScripts`` read: the proxy, the intercepted host and port, the gateway's CA.
    func h2ClientEnvironment(_ gateway: GatewayHarness) -> [String: String] {
        ["PROXY_PORT": "\(gateway.proxyPort)", "HOST": "localhost", "PORT": "\(upstream.port)", "CA": caPath]
    }
}
