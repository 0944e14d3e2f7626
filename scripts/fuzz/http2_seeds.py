"""Seeds of the http2-frames fuzz target (Fuzz/Corpus/http2-frames/), written by a real
HTTP/2 client: the `h2` package from PyPI (with its `hpack` and `hyperframe`).

    python3 scripts/fuzz/http2_seeds.py [--check]

Each seed is what a client sends after the connection preface's magic line (its
SETTINGS first), behind the two option bytes the target reads (Sources/GatewayFuzzing/
HTTP2FrameInvariants.swift): 0x00 (the target sends the magic line first), then the
size of the pieces the bytes also arrive in. Every seed is a valid exchange, each
about one part of the protocol:

    get                 a GET, its fields Huffman-coded
    post-data           a POST, its body in two DATA frames, content-length matching
    cookies             cookie crumbs in separate fields (joined by the translation)
    trailers            te: trailers, a body, then trailing HEADERS ending the stream
    continuation        a header block split over HEADERS and two CONTINUATION frames
    rst-after-headers   HEADERS, RST_STREAM (CANCEL), then another request
    settings            the server's SETTINGS acknowledged, the client's changed, a GET
    window-update       WINDOW_UPDATE on the connection and on an open stream
    priority            PRIORITY frames and HEADERS carrying a priority
    padding             padded DATA frames (10 bytes of padding, then none)
    multiplexed         three requests interleaved with a PING, then GOAWAY

--check also reads every seed back with h2 in server mode (no protocol error, the
expected number of requests). The seeds are small (well under libFuzzer's default
-max_len of 4,096 bytes), so that the fuzzer's inputs stay under the flow-control
window the target compares pieces within.
"""
import argparse
import pathlib
import sys

import h2.config
import h2.connection
import h2.events
from hyperframe.frame import ContinuationFrame, HeadersFrame, SettingsFrame

MAGIC = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
CORPUS = pathlib.Path(__file__).resolve().parent.parent.parent / "Fuzz" / "Corpus" / "http2-frames"


def request(method, path, *extra, authority="api.example.test"):
    return [(":method", method), (":scheme", "https"), (":authority", authority), (":path", path), *extra]


class Client:
    """An h2 client connection whose bytes are collected, magic line removed."""

    def __init__(self):
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        self.out = bytearray()
        self.flush()
        assert self.out.startswith(MAGIC)
        del self.out[: len(MAGIC)]

    def flush(self):
        self.out += self.conn.data_to_send()

    def raw(self, data):
        self.flush()
        self.out += data


def get():
    c = Client()
    c.conn.send_headers(1, request("GET", "/v1/items?page=2", ("user-agent", "seed/1"), ("accept", "*/*")), end_stream=True)
    return c


def post_data():
    c = Client()
    c.conn.send_headers(1, request("POST", "/upload", ("content-type", "text/plain"), ("content-length", "11")))
    c.conn.send_data(1, b"hello ")
    c.conn.send_data(1, b"world", end_stream=True)
    return c


def cookies():
    c = Client()
    c.conn.send_headers(1, request("GET", "/", ("cookie", "a=1"), ("accept", "*/*"), ("cookie", "b=2"), ("cookie", "c=3")), end_stream=True)
    return c


def trailers():
    c = Client()
    c.conn.send_headers(1, request("POST", "/pkg.Service/Call", ("content-type", "application/grpc"), ("te", "trailers")))
    c.conn.send_data(1, b"\x00\x00\x00\x00\x03abc")
    c.conn.send_headers(1, [("grpc-status", "0"), ("x-checksum", "abc")], end_stream=True)
    return c


def continuation():
    c = Client()
    fields = request("GET", "/split", *[(f"x-field-{i}", "v" * 20) for i in range(6)])
    block = c.conn.encoder.encode(fields)
    third = len(block) // 3
    c.raw(HeadersFrame(1, data=block[:third], flags=["END_STREAM"]).serialize())
    c.raw(ContinuationFrame(1, data=block[third : 2 * third]).serialize())
    c.raw(ContinuationFrame(1, data=block[2 * third :], flags=["END_HEADERS"]).serialize())
    return c


def rst_after_headers():
    c = Client()
    c.conn.send_headers(1, request("POST", "/slow", ("content-length", "100")))
    c.conn.reset_stream(1, error_code=8)  # CANCEL
    c.conn.send_headers(3, request("GET", "/after"), end_stream=True)
    return c


def settings():
    c = Client()
    # The server's SETTINGS, as the gateway sends them: the client acknowledges them.
    c.conn.receive_data(SettingsFrame(0, settings={3: 100, 6: 32768}).serialize())
    c.conn.update_settings({1: 0, 4: 1 << 20, 5: 32768})  # no dynamic table, larger window and frames
    c.conn.send_headers(1, request("GET", "/after-settings"), end_stream=True)
    return c


def window_update():
    c = Client()
    c.conn.increment_flow_control_window(1 << 20)
    c.conn.send_headers(1, request("PUT", "/object", ("content-length", "4")))
    c.conn.increment_flow_control_window(4096, stream_id=1)
    c.conn.send_data(1, b"data", end_stream=True)
    return c


def priority():
    c = Client()
    c.conn.prioritize(5, weight=32)
    c.conn.send_headers(1, request("GET", "/style.css"), end_stream=True, priority_weight=201, priority_depends_on=0)
    c.conn.send_headers(3, request("GET", "/app.js"), end_stream=True, priority_weight=100, priority_depends_on=1, priority_exclusive=True)
    c.conn.prioritize(3, weight=16, depends_on=5)
    return c


def padding():
    c = Client()
    c.conn.send_headers(1, request("POST", "/padded", ("content-length", "8")))
    c.conn.send_data(1, b"abcd", pad_length=10)
    c.conn.send_data(1, b"efgh", end_stream=True, pad_length=0)
    return c


def multiplexed():
    c = Client()
    c.conn.send_headers(1, request("GET", "/a"))
    c.conn.send_headers(3, request("GET", "/b", ("accept", "text/html")), end_stream=True)
    c.conn.ping(b"12345678")
    c.conn.send_headers(5, request("POST", "/c", ("content-length", "2")))
    c.conn.send_data(5, b"ok", end_stream=True)
    c.conn.send_data(1, b"", end_stream=True)
    c.conn.close_connection()
    return c


# name: (builder, piece size, requests the server reads)
SEEDS = {
    "get": (get, 7, 1),
    "post-data": (post_data, 3, 1),
    "cookies": (cookies, 1, 1),
    "trailers": (trailers, 11, 1),
    "continuation": (continuation, 5, 1),
    "rst-after-headers": (rst_after_headers, 9, 2),
    "settings": (settings, 2, 1),
    "window-update": (window_update, 13, 1),
    "priority": (priority, 4, 2),
    "padding": (padding, 6, 1),
    "multiplexed": (multiplexed, 17, 3),
}


def read_back(data):
    """The requests an h2 server reads from the seed's client bytes."""
    server = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
    server.initiate_connection()
    events = server.receive_data(MAGIC + data)
    return sum(isinstance(event, h2.events.RequestReceived) for event in events)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="read every seed back with an h2 server")
    args = parser.parse_args()
    CORPUS.mkdir(parents=True, exist_ok=True)
    for name, (build, piece, requests) in SEEDS.items():
        client = build()
        client.flush()
        data = bytes(client.out)
        (CORPUS / name).write_bytes(bytes([0x00, piece]) + data)
        if args.check:
            read = read_back(data)
            if read != requests:
                sys.exit(f"{name}: an h2 server read {read} requests, expected {requests}")
        print(f"{name:18} {len(data) + 2:5} bytes")


if __name__ == "__main__":
    main()
