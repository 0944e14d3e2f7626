"""Render the benchmark results (runs.jsonl, gateway-extras.json, meta.json) as markdown."""
import json
import os
import sys
from statistics import mean

BUSY_PCT = 10.0
# Written by scripts/allocs.sh into the same file; kept when bench.sh rewrites it.
ALLOCS_TITLE = "## Allocations per proxied request"  # other processes' share of all CPUs above which a run is flagged


def load_jsonl(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def lines_of(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def fmt_rps(v):
    return f"{v / 1000:.1f}k" if v >= 1000 else f"{v:.0f}"


def fmt_us(v):
    if v is None:
        return "—"
    return f"{v:.0f} µs" if v < 1000 else f"{v / 1000:.2f} ms"


def mib(kib):
    return None if kib is None else kib / 1024


def fmt_cpu(s, unit=""):
    """A row's CPU per request, with its user-space and kernel parts: `40.8 (21.3 user / 19.5 kernel)`."""
    if not s or s.get("cpu") is None:
        return "—"
    text = f"{s['cpu']:.1f}{unit}"
    if s.get("cpu_user") is not None:
        text += f" ({s['cpu_user']:.1f} user / {s['cpu'] - s['cpu_user']:.1f} kernel)"
    return text


def fmt_ratio(a, b):
    return f"{a / b:.2f}" if a and b else "—"


def group(runs):
    groups = {}
    for r in runs:
        groups.setdefault((r["name"], r["body"], r["conns"]), []).append(r)
    return groups


def row_stats(rs):
    ok = [r for r in rs if r.get("rps")]
    if not ok:
        return None
    def avg(key):
        vals = [r[key] for r in ok if r.get(key) is not None]
        return mean(vals) if vals else None
    return {
        "rps_runs": [r["rps"] for r in ok], "rps": mean(r["rps"] for r in ok),
        "p50": avg("p50_us"), "p99": avg("p99_us"), "cpu": avg("cpu_us_per_req"), "cpu_user": avg("cpu_user_us_per_req"),
        "rss_idle": min((r["rss_idle_kib"] for r in ok if r.get("rss_idle_kib")), default=None),
        "rss_load": max((r["rss_load_kib"] for r in ok if r.get("rss_load_kib")), default=None),
        "busy": max(r.get("other_cpu_pct") or 0 for r in ok),
        "load_busy": avg("load_cpu_busy_pct"), "proxy_busy": avg("proxy_cpu_busy_pct"),
        "errors": sum(r["non2xx"] + sum(v for k, v in r["errors"].items()
                                        if not (k == "read" and r.get("expect_read_errors"))) for r in ok),
        "closes": sum(r["errors"]["read"] for r in ok if r.get("expect_read_errors")),
    }


def table(runs, order):
    groups = group(runs)
    stats = {k: row_stats(v) for k, v in groups.items()}
    loads = []
    for (_, body, conns) in groups:
        if (body, conns) not in loads:
            loads.append((body, conns))
    lines = ["| proxy | body | conns | req/s | p50 | p99 | ×direct | ×HAProxy | CPU µs/req (user / kernel) | RSS MiB idle / load |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for body, conns in loads:
        direct = stats.get(("direct", body, conns))
        haproxy = stats.get(("haproxy", body, conns))
        for name in order:
            s = stats.get((name, body, conns))
            if s is None:
                continue
            rps = " / ".join(fmt_rps(v) for v in s["rps_runs"])
            if s["busy"] > BUSY_PCT:
                rps += " \\*"
            if s["errors"]:
                rps += f" (!{s['errors']} errors)"
            if s["closes"]:
                rps += " †"
            rss = "—" if s["rss_idle"] is None else f"{mib(s['rss_idle']):.1f} / {mib(s['rss_load']):.1f}"
            cpu = fmt_cpu(s)
            lines.append(f"| {name} | {body} | {conns} | {rps} | {fmt_us(s['p50'])} | {fmt_us(s['p99'])} | "
                         f"{fmt_ratio(s['rps'], direct and direct['rps'])} | "
                         f"{fmt_ratio(s['rps'], haproxy and haproxy['rps'])} | {cpu} | {rss} |")
    return lines, stats


def extras_lines(extras):
    lines = []
    idle = extras.get("idle_conns")
    if idle and "rss_held_kib" in idle:
        lines.append(
            f"- gateway RSS with {idle['count']:,} keep-alive client connections: "
            f"{mib(idle['rss_before_kib']):.1f} MiB before, {mib(idle['rss_connected_kib']):.1f} MiB connected "
            f"(no request), {mib(idle['rss_held_kib']):.1f} MiB after one request each and held "
            f"({idle['ok_responses']}/{idle['count']} 2xx, {idle['still_open']} still open), "
            f"{mib(idle['rss_after_close_kib']):.1f} MiB after closing them")
    elif idle:
        lines.append(f"- gateway RSS with 1,000 idle connections: FAILED ({idle.get('error', '?')})")
    stream = extras.get("stream")
    if stream and stream.get("bytes"):
        lines.append(
            f"- gateway RSS while streaming a 1 GiB body (curl, HTTP {stream['http_code']}, "
            f"{stream['bytes']} bytes in {stream['seconds']} s = {stream['mib_per_s']} MiB/s): "
            f"{mib(stream['rss_before_kib']):.1f} MiB before, peak {mib(stream['rss_peak_kib']):.1f} MiB "
            f"(first quarter {mib(stream['rss_first_quarter_peak_kib']):.1f}, last quarter "
            f"{mib(stream['rss_last_quarter_peak_kib']):.1f}), {mib(stream['rss_after_kib']):.1f} MiB after; "
            f"{stream['samples']} samples every 100 ms")
    elif stream:
        lines.append(f"- gateway 1 GiB stream: FAILED ({stream.get('error') or stream.get('curl_error') or stream})")
    return lines


def verdict(ok):
    return "met" if ok else "**not met**"


# The gateway configs compared by CPU per request (issue 14): rows of the same run.
CPU_VARIANTS = [("gateway", "default config"), ("gateway-policies", "typical policies"),
                ("gateway-traces", "debug traces")]


# A load CPU busier than this (percent) during a run is taken as saturated.
LOAD_BOUND_PCT = 97.0


def fmt_x(v):
    return "—" if v is None else f"{v:.2f}×"


def cpu_ratio(a, b):
    return a["cpu"] / b["cpu"] if a and b and a.get("cpu") and b.get("cpu") else None


def cpu_ratio_lines(stats):
    """Per load: each gateway config's CPU per request ÷ HAProxy's, and typical / traces ÷ default."""
    loads = []
    for (name, body, conns) in stats:
        if name == "haproxy" and (body, conns) not in loads:
            loads.append((body, conns))
    lines = ["| body | conns | HAProxy CPU µs/req (user / kernel) | default ÷ HAProxy | typical ÷ HAProxy | traces ÷ HAProxy "
             "| typical ÷ default | traces ÷ default | otel ÷ default | info ÷ warning |", "|---|---|---|---|---|---|---|---|---|---|"]
    for body, conns in loads:
        h = stats.get(("haproxy", body, conns))
        g = {name: stats.get((name, body, conns)) for name, _ in CPU_VARIANTS}
        if not any(g.values()):
            continue
        haproxy_cpu = fmt_cpu(h)
        lines.append(f"| {body} | {conns} | {haproxy_cpu} | "
                     + " | ".join(fmt_x(cpu_ratio(g[name], h)) for name, _ in CPU_VARIANTS) + " | "
                     f"{fmt_x(cpu_ratio(g['gateway-policies'], g['gateway']))} | "
                     f"{fmt_x(cpu_ratio(g['gateway-traces'], g['gateway']))} | "
                     f"{fmt_x(cpu_ratio(stats.get(('gateway-otel', body, conns)), g['gateway']))} | "
                     f"{fmt_x(cpu_ratio(stats.get(('gateway-log-info', body, conns)), g['gateway']))} |")
    return lines if len(lines) > 2 else []


def cpu_summary(stats, body="1k", conns=50):
    """Short lines for the end of bench.sh's output: the 1k × 50 ratios of this run."""
    h = stats.get(("haproxy", body, conns))
    g = {name: stats.get((name, body, conns)) for name, _ in CPU_VARIANTS}
    out = []
    for name, label in CPU_VARIANTS:
        r = cpu_ratio(g[name], h)
        if r is not None:
            out.append(f"{label} ({name}): {fmt_cpu(g[name], ' µs/req')} = {r:.2f}× HAProxy's {fmt_cpu(h, ' µs/req')}")
    for name, label in (("gateway-policies", "typical / default"), ("gateway-traces", "traces / default"),
                        ("gateway-log-info", "info / warning")):
        r = cpu_ratio(stats.get((name, body, conns)), g["gateway"])
        if r is not None:
            out.append(f"{label} CPU per request: {r:.2f}×")
    r = cpu_ratio(stats.get(("gateway-otel", body, conns)), g["gateway"])
    if r is not None:
        out.append(f"tracing on, sampling 1.0 / default (gateway-otel) CPU per request: {r:.2f}×")
    base = stats.get((SIZE_BASE, body, conns))
    for name, label in SIZE_VARIANTS:
        r = cpu_ratio(stats.get((name, body, conns)), base)
        if r is not None:
            out.append(f"{label}: {r:.2f}× one upstream's CPU per request ({fmt_cpu(stats.get((name, body, conns)), ' µs/req')} "
                       f"vs {fmt_cpu(base, ' µs/req')})")
    for name, label in (("nio-floor", "floor of the design (nio-floor, NIOHTTP1 both sides)"),
                        ("nio-byte-floor", "floor without the HTTP codec (nio-byte-floor, ByteBuffers both sides)")):
        floor = stats.get((name, body, conns))
        r = cpu_ratio(floor, h)
        if r is not None:
            above = cpu_ratio(g["gateway"], floor)
            out.append(f"{label}: {fmt_cpu(floor, ' µs/req')} = {r:.2f}× HAProxy's"
                       + (f"; the gateway's default config is {above:.2f}× this floor" if above is not None else ""))
    return out


def targets_14(stats, body="1k", conns=50):
    h = stats.get(("haproxy", body, conns))
    g = {name: stats.get((name, body, conns)) for name, _ in CPU_VARIANTS}
    out = []
    r = cpu_ratio(g["gateway"], h)
    if r is not None:
        out.append(f"- default config: gateway CPU per request ≤ 1.5× HAProxy's ({body}, {conns} conns): "
                   f"{r:.2f}× — {verdict(r <= 1.5)}")
    for name, label, limit in (("gateway-policies", "typical policies on", 1.15), ("gateway-traces", "debug traces on", 1.5)):
        r = cpu_ratio(g[name], g["gateway"])
        if r is not None:
            out.append(f"- {label}: ≤ {limit}× the default config's CPU per request: {r:.2f}× — {verdict(r <= limit)}")
    out += throughput_100k(stats)
    return out


def targets_38(stats, body="1k", conns=50):
    """Issue 38: tracing on at sampling 1.0 (gateway-otel.yaml, spans to a local OTLP sink) against the
    default config of the same run."""
    r = cpu_ratio(stats.get(("gateway-otel", body, conns)), stats.get(("gateway", body, conns)))
    if r is None:
        return []
    return [f"- tracing on, sampling 1.0: ≤ 1.2× the default config's CPU per request ({body}, {conns} conns): "
            f"{r:.2f}× — {verdict(r <= 1.2)}"]


def throughput_100k(stats, conns=50):
    """The 100 KiB throughput target, with how busy each CPU was: when the load CPU (wrk and the
    origin) is saturated in both rows, both proxies ran at the load side's pace, and the ratio
    says more about that CPU than about the proxies (their CPU per request still does)."""
    g, h = stats.get(("gateway", "100k", conns)), stats.get(("haproxy", "100k", conns))
    if not g or not h:
        return []
    r = g["rps"] / h["rps"]
    line = f"- 100 KiB × {conns}: throughput ≥ HAProxy's: {r:.2f}× — {verdict(r >= 1)}"
    if g.get("load_busy") is not None and h.get("load_busy") is not None:
        line += (f"; load CPU (wrk + origin) busy {g['load_busy']:.0f}% / {h['load_busy']:.0f}%, proxy CPU busy "
                 f"{g['proxy_busy']:.0f}% / {h['proxy_busy']:.0f}% (gateway / HAProxy)")
        if min(g["load_busy"], h["load_busy"]) >= LOAD_BOUND_PCT:
            c = cpu_ratio(g, h)
            line += (f". Both rows were bound by the load CPU: the throughput ratio is that CPU's; the proxies' "
                     f"own cost at 100 KiB is their CPU per request" + (f", gateway {c:.2f}× HAProxy's" if c else ""))
    return [line]


# The config-size rows (issue 40, scripts/bench/config_size.py): each against one upstream's
# CPU per request in the same run.
SIZE_BASE = "gateway-size-1"
SIZE_VARIANTS = [("gateway-size-500-exact", "500 upstreams, request for the last by exact host"),
                 ("gateway-size-500-suffix", "500 upstreams, request for the last by `*.suffix`"),
                 ("gateway-size-2000-deny", "one upstream + 2,000 deny rules (1,000 names, 1,000 CIDRs)"),
                 ("gateway-size-1-faults-idle", "one upstream + fault rules that never fire (rate 0)")]
SIZE_LIMIT = 1.1
# Faults configured but not firing (issue 55) cost at most this against none.
SIZE_LIMITS = {"gateway-size-1-faults-idle": 1.05}


def size_loads(stats):
    loads = []
    for (name, body, conns) in stats:
        if name == SIZE_BASE and (body, conns) not in loads:
            loads.append((body, conns))
    return loads


def size_lines(stats):
    """Per load: each config-size row's CPU per request, and its ratio to one upstream's."""
    lines = ["| config | body | conns | CPU µs/req (user / kernel) | ÷ one upstream |", "|---|---|---|---|---|"]
    for body, conns in size_loads(stats):
        base = stats.get((SIZE_BASE, body, conns))
        rows = [("one upstream", base)] + [(label, stats.get((name, body, conns))) for name, label in SIZE_VARIANTS]
        for label, s in rows:
            if s is None:
                continue
            lines.append(f"| {label} | {body} | {conns} | {fmt_cpu(s)} | {fmt_x(cpu_ratio(s, base))} |")
    return lines if len(lines) > 2 else []


def size_targets(stats):
    out = []
    for body, conns in size_loads(stats):
        base = stats.get((SIZE_BASE, body, conns))
        for name, label in SIZE_VARIANTS:
            r = cpu_ratio(stats.get((name, body, conns)), base)
            limit = SIZE_LIMITS.get(name, SIZE_LIMIT)
            if r is not None:
                out.append(f"- {label} ({body}, {conns} conns): ≤ {limit}× one upstream's CPU per request: "
                           f"{r:.2f}× — {verdict(r <= limit)}")
    return out


# Issue 40's CPU targets, per load of the paired run: wrk's bare head (1k) and a mobile app's
# ten-field head (1k-app), 50 connections. The default config against HAProxy, the typical
# policies and `info` logging against the default config (at `warning`); all of them run in
# the same alternating group (bench.sh), so each ratio is of the same rounds.
CPU_TARGETS_40 = {"1k": ("wrk's head", 1.15), "1k-app": ("app head", 1.2)}


def cpu_targets_40(stats, conns=50):
    out = []
    for body, (head, limit) in CPU_TARGETS_40.items():
        g, h = stats.get(("gateway", body, conns)), stats.get(("haproxy", body, conns))
        checks = [("default config ÷ HAProxy", cpu_ratio(g, h), limit),
                  ("typical policies ÷ default", cpu_ratio(stats.get(("gateway-policies", body, conns)), g), 1.1),
                  ("`info` logging ÷ `warning`", cpu_ratio(stats.get(("gateway-log-info", body, conns)), g), 1.1)]
        for label, r, bound in checks:
            if r is not None:
                out.append(f"- {label} ({head}, {body}, {conns} conns): ≤ {bound}× CPU per request: {r:.2f}× — "
                           f"{verdict(r <= bound)}")
    return out


def kept_section(path, title):
    """A section of an earlier results file that bench.sh does not produce (written by another script)."""
    if not os.path.exists(path):
        return []
    kept, inside = [], False
    for line in open(path).read().splitlines():
        if line.startswith("## "):
            inside = line == title
        if inside:
            kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    return kept + [""] if kept else []


def targets(stats, extras, order):
    out = []
    def get(name, body, conns):
        return stats.get((name, body, conns))
    g, h = get("gateway", "1k", 50), get("haproxy", "1k", 50)
    if g and h:
        out.append(f"- throughput ≥ HAProxy (1k, 50 conns): {g['rps'] / h['rps']:.2f}× — {verdict(g['rps'] >= h['rps'])}")
    for body in ("1k", "100k"):
        g = get("gateway", body, 50)
        peers = [(p, get(p, body, 50)) for p in ("squid", "tinyproxy") if get(p, body, 50)]
        if g and peers:
            beaten = all(g["rps"] > s["rps"] for _, s in peers)
            names = ", ".join(f"{p} {s['rps'] / 1000:.1f}k" for p, s in peers)
            out.append(f"- beats squid and tinyproxy ({body}, 50 conns): gateway {g['rps'] / 1000:.1f}k vs {names} — {verdict(beaten)}")
    g, d = get("gateway", "1k", 1), get("direct", "1k", 1)
    if g and d and g["p50"] and d["p50"]:
        added = g["p50"] - d["p50"]
        out.append(f"- p50 added at 1 connection ≤ 100 µs: +{added:.0f} µs ({fmt_us(d['p50'])} → {fmt_us(g['p50'])}) — {verdict(added <= 100)}")
    g = get("gateway", "1k", 50)
    if g and g["rss_idle"]:
        out.append(f"- RSS idle ≤ 30 MiB: {mib(g['rss_idle']):.1f} MiB — {verdict(mib(g['rss_idle']) <= 30)}")
    idle = extras.get("idle_conns") or {}
    if "rss_held_kib" in idle:
        worst = max(idle["rss_connected_kib"], idle["rss_held_kib"])
        out.append(f"- RSS with 1,000 connections ≤ 100 MiB: {mib(worst):.1f} MiB — {verdict(mib(worst) <= 100)}")
    stream = extras.get("stream") or {}
    if stream.get("bytes"):
        growth = mib(stream["rss_last_quarter_peak_kib"] - stream["rss_first_quarter_peak_kib"])
        flat = growth <= 4 and stream["bytes"] == 1 << 30
        out.append(f"- 1 GiB streamed with flat memory: last-quarter peak − first-quarter peak = {growth:+.1f} MiB, "
                   f"peak − before = {mib(stream['rss_peak_kib'] - stream['rss_before_kib']):+.1f} MiB — {verdict(flat)}")
    base = get("gateway", "1k", 50)
    variants = [n for n in order if n.startswith("gateway") and n != "gateway" and not n.startswith("gateway-size-")]
    for name in variants:
        v = get(name, "1k", 50)
        if base and v:
            loss = 1 - v["rps"] / base["rps"]
            check = "" if "log" in name else f" — {verdict(loss <= 0.10)} (target ≤ 10%)"
            out.append(f"- {name} vs gateway (1k, 50 conns): {loss * 100:+.1f}% throughput lost{check}")
    if not any(n for n in variants if "log" not in n):
        out.append("- ≤ 10% lost with metrics and typical policies: not measured (no gateway-*.yaml policy "
                   "template in scripts/bench/templates yet)")
    return out


# The HTTP/2 rows (issue 37; bench.sh --only http2, records in runs-h2.jsonl). HTTP/2 clients
# (H2ProxyLoad, C connections × S streams): the TLS origin direct, the gateway's interception
# (CONNECT, TLS, h2 both sides) and HAProxy as a TLS-terminating h2 reverse proxy (the nearest
# role it has: it cannot intercept CONNECT); then wrk's HTTP/1.1 through each proxy to the TLS
# origin over h2 and over HTTP/1.1.
H2_CLIENT_ROWS = [("direct-h2", "TLS origin direct (nginx, h2)"),
                  ("gateway-intercept-h2", "gateway: CONNECT + interception, h2 both sides"),
                  ("haproxy-tls-h2", "HAProxy: TLS-terminating h2 reverse proxy, no CONNECT")]
H2_UPSTREAM_ROWS = [("gateway", "gateway-up-h2", "gateway-up-h1"), ("HAProxy", "haproxy-up-h2", "haproxy-up-h1"),
                    ("gateway, client certificate", "gateway-up-h2-mtls", "gateway-up-h1-mtls")]


def h2_stats(runs):
    """Per (name, body, conns, streams): row_stats plus the origin's connections (most open, new)."""
    groups = {}
    for r in runs:
        groups.setdefault((r["name"], r["body"], r["conns"], r.get("streams")), []).append(r)
    out = {}
    for key, rs in groups.items():
        s = row_stats(rs)
        if s is None:
            continue
        peaks = [r["origin_conns_peak"] for r in rs if r.get("origin_conns_peak") is not None]
        accepts = [r["origin_accepts"] for r in rs if r.get("origin_accepts") is not None]
        s["conns_open"] = max(peaks) if peaks else None
        s["conns_new"] = max(accepts) if accepts else None
        s["key"] = key
        out[key] = s
    return out


def h2_find(stats, name):
    """The rows of `name`, in the order of their loads."""
    return [s for key, s in stats.items() if key[0] == name]


def h2_cells(s):
    rps = " / ".join(fmt_rps(v) for v in s["rps_runs"])
    if s["busy"] > BUSY_PCT:
        rps += " \\*"
    if s["errors"]:
        rps += f" (!{s['errors']} errors)"
    conns = "—" if s["conns_open"] is None else f"{s['conns_open']} / {s['conns_new']}"
    rss = "—" if s["rss_idle"] is None else f"{mib(s['rss_idle']):.1f} / {mib(s['rss_load']):.1f}"
    return rps, conns, rss, fmt_cpu(s)


def h2_load(key):
    _, body, conns, streams = key
    return f"{conns} × {streams}" if streams else f"{body} × {conns}"


def h2_section(runs, protocols):
    if not runs:
        return []
    stats = h2_stats(runs)
    md = ["## HTTP/2 (issue 37)", "",
          "`scripts/bench.sh --only http2`. The origin: nginx with TLS and HTTP/2 (`listen ... ssl http2`, ALPN h2 "
          "and http/1.1; a throwaway P-256 CA and leaf made by openssl at bench time), the same 1 KiB file, one worker "
          "on CPU 0 with the load generator; the proxy on CPU 1. Upstream conns = the most connections open at the "
          "origin during a run (nginx stub_status, read each second) / new ones during it (after the warm-up). "
          "CPU µs/req as above: the proxy's CPU time ÷ requests.", "",
          "### HTTP/2 clients through interception", "",
          "H2ProxyLoad (`Benchmarks/Benchmarks/H2ProxyLoad`: SwiftNIO, NIOHTTP2, NIOSSL; on CPU 0) keeps S streams "
          "busy on each of C connections, a GET of /1k each. Through the gateway it sends `CONNECT h2.bench.test:443`, "
          "then TLS with the gateway's interception CA (the leaf minted once, then cached) and HTTP/2; the gateway "
          "sends each stream to the origin over HTTP/2 (ALPN auto). HAProxy cannot intercept the TLS inside a CONNECT "
          "tunnel, so its row is the nearest role it has: a TLS-terminating HTTP/2 reverse proxy (`bind ... ssl alpn "
          "h2,http/1.1`, `server ... ssl alpn h2`, `http-reuse always`) that the client reaches directly (`--direct`: "
          "no CONNECT and its 200, which the gateway's row pays once per connection). Both terminate the client's "
          "TLS, speak h2 on both sides and verify the origin's certificate. The direct row: the client straight to "
          "the origin, nginx on CPU 1.", "",
          "| path | conns × streams | req/s | p50 | p99 | ×direct | ×HAProxy | CPU µs/req (user / kernel) | CPU ÷ HAProxy "
          "| upstream conns open / new | RSS MiB idle / load |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    loads = []
    for key in stats:
        if key[0] in dict(H2_CLIENT_ROWS) and key[1:] not in loads:
            loads.append(key[1:])
    for load in loads:
        direct = stats.get(("direct-h2",) + load)
        haproxy = stats.get(("haproxy-tls-h2",) + load)
        for name, label in H2_CLIENT_ROWS:
            s = stats.get((name,) + load)
            if s is None:
                continue
            rps, conns, rss, cpu = h2_cells(s)
            if name == "direct-h2":
                conns = "—"
            md.append(f"| {label} | {h2_load(s['key'])} | {rps} | {fmt_us(s['p50'])} | {fmt_us(s['p99'])} | "
                      f"{fmt_ratio(s['rps'], direct and direct['rps'])} | {fmt_ratio(s['rps'], haproxy and haproxy['rps'])} | "
                      f"{cpu} | {fmt_x(cpu_ratio(s, haproxy))} | {conns} | {rss} |")
    md += ["", "### h2 upstream vs HTTP/1.1 upstream (wrk: HTTP/1.1 clients, 50 connections by default)", "",
           "wrk (HTTP/1.1, absolute form `http://origin.bench.test/1k`) to each proxy, which sends every request to "
           "the TLS origin: the gateway with `origin: https://127.0.0.1:PORT` and `http_version: http2` or `http1` "
           "(`tls.ca_file` the bench CA); HAProxy with one backend `server ... ssl alpn h2` or `alpn http/1.1`, "
           "`http-reuse always`. The gateway's rows again with `tls.client_certificate` configured, to the origin's "
           "port that requires one (`ssl_verify_client on`; \"client certificate\"). Their runs alternate.", "",
           "| proxy | upstream | load | req/s | p50 | p99 | CPU µs/req (user / kernel) | upstream conns open / new | RSS MiB idle / load |",
           "|---|---|---|---|---|---|---|---|---|"]
    ratio_lines = ["", "| proxy | load | h2 ÷ HTTP/1.1 req/s | h2 ÷ HTTP/1.1 CPU per request |", "|---|---|---|---|"]
    for proxy, h2_name, h1_name in H2_UPSTREAM_ROWS:
        for h2 in h2_find(stats, h2_name):
            h1 = stats.get((h1_name,) + h2["key"][1:])
            for label, s in (("h2", h2), ("HTTP/1.1", h1)):
                if s is None:
                    continue
                rps, conns, rss, cpu = h2_cells(s)
                md.append(f"| {proxy} | {label} | {h2_load(s['key'])} | {rps} | {fmt_us(s['p50'])} | {fmt_us(s['p99'])} | "
                          f"{cpu} | {conns} | {rss} |")
            if h1:
                ratio_lines.append(f"| {proxy} | {h2_load(h2['key'])} | {fmt_ratio(h2['rps'], h1['rps'])}× | "
                                   f"{fmt_x(cpu_ratio(h2, h1))} |")
    md += ratio_lines if len(ratio_lines) > 3 else []
    md += section_ratios(h2_summary(stats), stats)
    shown = [line for line in protocols if not line.rstrip().endswith(" 0")]
    if shown:
        md += ["The gateway's own count after its runs (`/metrics`: exchanges by the protocol of each hop, "
               "upstream connections open by protocol):", ""] + [f"- `{line}`" for line in shown] + [""]
    md += ["| row | load | run | req/s | requests | origin requests | new origin conns | most open at origin | "
           "non-2xx | errors | other load % |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        load = h2_load((r["name"], r["body"], r["conns"], r.get("streams")))
        errors = ", ".join(f"{k} {v}" for k, v in r["errors"].items() if v) or "0"
        md.append(f"| {r['name']} | {load} | {r['rep']} | {r['rps'] or 0:.0f} | {r['requests']} | {r['origin_requests']} | "
                  f"{r['origin_accepts']} | {r.get('origin_conns_peak')} | {r['non2xx']} | {errors} | {r['other_cpu_pct']} |")
    md.append("")
    return md


def h2_summary(stats):
    """Ratios against HAProxy in the same run, and h2 ÷ HTTP/1.1 upstream for each proxy."""
    out = []
    for g in h2_find(stats, "gateway-intercept-h2"):
        h = stats.get(("haproxy-tls-h2",) + g["key"][1:])
        if h:
            r = cpu_ratio(g, h)
            out.append(f"HTTP/2 clients ({h2_load(g['key'])}): gateway through interception {fmt_rps(g['rps'])} req/s, "
                       f"HAProxy (TLS termination) {fmt_rps(h['rps'])} ({fmt_ratio(g['rps'], h['rps'])}×); CPU per request "
                       f"{fmt_cpu(g, ' µs')} vs {fmt_cpu(h, ' µs')} ({fmt_x(r)})" if r is not None else
                       f"HTTP/2 clients ({h2_load(g['key'])}): gateway {fmt_rps(g['rps'])} req/s, HAProxy {fmt_rps(h['rps'])}")
    # The gateway's TLS-upstream rows against HAProxy's, and with a client certificate against without.
    for other, what in ((1, "HAProxy"), (2, "client certificate configured")):
        for label, pick in (("h2 upstream", 1), ("HTTP/1.1 upstream", 2)):
            for g in h2_find(stats, H2_UPSTREAM_ROWS[0][pick]):
                o = stats.get((H2_UPSTREAM_ROWS[other][pick],) + g["key"][1:])
                r = cpu_ratio(g, o) if o else None
                if r is None:
                    continue
                if other == 1:
                    out.append(f"{label} ({h2_load(g['key'])}): gateway {fmt_rps(g['rps'])} req/s, {what} {fmt_rps(o['rps'])} "
                               f"({fmt_ratio(g['rps'], o['rps'])}×); CPU per request {fmt_cpu(g, ' µs')} vs "
                               f"{fmt_cpu(o, ' µs')} ({fmt_x(r)})")
                else:
                    out.append(f"{what}, {label} ({h2_load(g['key'])}): gateway {fmt_rps(o['rps'])} req/s vs {fmt_rps(g['rps'])} "
                               f"without; CPU per request {fmt_cpu(o, ' µs')} vs {fmt_cpu(g, ' µs')} ({fmt_x(1 / r)})")
    for proxy, h2_name, h1_name in H2_UPSTREAM_ROWS:
        for h2 in h2_find(stats, h2_name):
            h1 = stats.get((h1_name,) + h2["key"][1:])
            if h1:
                out.append(f"{proxy}, h2 ÷ HTTP/1.1 upstream ({h2_load(h2['key'])}): req/s {fmt_ratio(h2['rps'], h1['rps'])}×, "
                           f"CPU per request {fmt_x(cpu_ratio(h2, h1))} ({fmt_cpu(h2, ' µs')} vs {fmt_cpu(h1, ' µs')}), "
                           f"upstream connections "
                           f"{h2['conns_open'] if h2['conns_open'] is not None else '?'} vs "
                           f"{h1['conns_open'] if h1['conns_open'] is not None else '?'}")
    return out

# The TLS handshake rows (issue 57; bench.sh --only tls-handshake, records in runs-tls.jsonl).
# (a) New intercepted connections (tls_connect_load.py: a connection per request, each a full
# handshake): the TLS origin direct, the gateway's interception (CONNECT, its cached leaf) and
# HAProxy terminating TLS. (b) New upstream TLS connections: wrk through each proxy to the
# origin's port that closes every connection after its response.
TLS_CLIENT_ROWS = [("direct-tls", "TLS origin direct (nginx)"),
                   ("gateway-intercept-tls", "gateway: CONNECT + interception (cached leaf)"),
                   ("haproxy-tls-term", "HAProxy: TLS termination, no CONNECT")]
TLS_UPSTREAM_ROWS = [("gateway-up-h1-new", "gateway (http_version http1)"),
                     ("haproxy-up-h1-new", "HAProxy, TLS session reuse (its default)"),
                     ("haproxy-up-h1-new-noreuse", "HAProxy, no-ssl-reuse (a full handshake each time)")]
# The WebSocket rows (issue 57; bench.sh --only websocket, records in runs-ws.jsonl).
WS_ROWS = [("direct-ws", "direct (sink on CPU 0, as below)"), ("gateway-ws", "gateway (default config)"),
           ("haproxy-ws", "HAProxy (forward proxy)"), ("direct-ws-spread", "direct, sink on CPU 1")]
SIZE_LABELS = {"1k": "1 KiB", "1m": "1 MiB"}


def ext_stats(runs):
    """h2_stats, plus the load client's CPU per request, the WebSocket MB/s and the origin's TLS
    handshakes (resumed or not) of the runs."""
    stats = h2_stats(runs)
    for key, s in stats.items():
        rs = [r for r in runs if (r["name"], r["body"], r["conns"], r.get("streams")) == key and r.get("rps")]
        vals = [r["client_cpu_us_per_req"] for r in rs if r.get("client_cpu_us_per_req") is not None]
        s["client_cpu"] = mean(vals) if vals else None
        mbs = [(r.get("client") or {}).get("mb_per_s") for r in rs]
        s["mb_runs"] = [v for v in mbs if v is not None]
        s["mb"] = mean(s["mb_runs"]) if s["mb_runs"] else None
        hs = [r["origin_tls_handshakes"] for r in rs if r.get("origin_tls_handshakes") is not None]
        s["tls_handshakes"] = sum(hs) if hs else None
        s["tls_resumed"] = sum(r.get("origin_tls_resumed") or 0 for r in rs) if hs else None
        s["requests"] = sum(r["requests"] for r in rs)
        acc = [r["origin_accepts"] for r in rs if r.get("origin_accepts") is not None]
        s["origin_accepts"] = sum(acc) if acc else None
    return stats


def busy_cell(s):
    if s.get("load_busy") is None or s.get("proxy_busy") is None:
        return "—"
    return f"{s['load_busy']:.0f} / {s['proxy_busy']:.0f}%"


def rps_cell(s):
    rps = " / ".join(fmt_rps(v) for v in s["rps_runs"])
    if s["busy"] > BUSY_PCT:
        rps += " \\*"
    if s["errors"]:
        rps += f" (!{s['errors']} errors)"
    return rps


def capacity(s):
    """Connections (or requests) per CPU-second of the proxy: 1e6 / its CPU µs per request."""
    return 1e6 / s["cpu"] if s and s.get("cpu") else None


def tls_section(runs):
    if not runs:
        return []
    stats = ext_stats(runs)
    md = ["## TLS handshakes (issue 57)", "",
          "`scripts/bench.sh --only tls-handshake`. The TLS origin of the HTTP/2 rows (nginx, the bench CA's P-256 leaf; "
          "on CPU 0 with the load client, the proxy on CPU 1). The gateway's interception leaf is P-256 too (its "
          "local CA), minted once and cached; HAProxy presents the bench leaf. CPU µs/conn = the proxy's CPU time ÷ "
          "connections; load / proxy CPU busy = the two CPUs' busy share during the run (a load CPU near 100% means "
          "the client and origin set the pace: compare the CPU per connection then, which does not depend on it).", "",
          "### New intercepted connections", "",
          "`scripts/bench/tls_connect_load.py` (CPython's ssl, i.e. OpenSSL; two processes of threads, blocking "
          "sockets, on CPU 0): every connection is new; through the gateway it sends `CONNECT h2.bench.test:443`, "
          "then a full TLS 1.3 handshake (no resumption, ALPN http/1.1, the chain verified), `GET /1k` with "
          "`Connection: close`, reads the response and closes. HAProxy (`bind ... ssl`, the h2 row's frontend) gets "
          "the same without the CONNECT; both send the request to the origin over pooled h2 connections. Direct: the "
          "client to the origin (nginx on CPU 1), the client's own ceiling. Client CPU µs/conn: the load client's.", "",
          "| path | conns in flight | conn/s | p50 | p99 | ×direct | ×HAProxy | CPU µs/conn (user / kernel) "
          "| CPU ÷ HAProxy | client CPU µs/conn | load / proxy CPU busy |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    loads = []
    for key in stats:
        if key[0] in dict(TLS_CLIENT_ROWS) and key[1:] not in loads:
            loads.append(key[1:])
    for load in loads:
        direct, haproxy = stats.get(("direct-tls",) + load), stats.get(("haproxy-tls-term",) + load)
        for name, label in TLS_CLIENT_ROWS:
            s = stats.get((name,) + load)
            if s is None:
                continue
            client = "—" if s["client_cpu"] is None else f"{s['client_cpu']:.0f}"
            md.append(f"| {label} | {load[1]} | {rps_cell(s)} | {fmt_us(s['p50'])} | {fmt_us(s['p99'])} | "
                      f"{fmt_ratio(s['rps'], direct and direct['rps'])} | {fmt_ratio(s['rps'], haproxy and haproxy['rps'])} | "
                      f"{fmt_cpu(s)} | {fmt_x(cpu_ratio(s, haproxy))} | {client} | {busy_cell(s)} |")
    md += ["", "### New upstream TLS connections", "",
           "wrk (HTTP/1.1, keep-alive, absolute form `http://origin.bench.test/1k`) through each proxy to the origin's "
           "port that closes every connection after its response (`keepalive_timeout 0`, HTTP/1.1): each request "
           "opens a new upstream connection (TCP, a TLS handshake verifying the origin's chain against the bench CA, "
           "the request). The gateway: `origin: https://...`, `http_version: http1`; HAProxy: `server ... ssl verify "
           "required alpn http/1.1`, as it ships (it resumes its last TLS session with the server) and with "
           "`no-ssl-reuse`. Handshakes resumed: the origin's count (`$ssl_session_reused`).", "",
           "| proxy | load | req/s | p50 | p99 | CPU µs/req (user / kernel) | CPU ÷ HAProxy no-reuse | new upstream conns "
           "per request | handshakes resumed | load / proxy CPU busy |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for name, label in TLS_UPSTREAM_ROWS:
        for s in h2_find(stats, name):
            full = stats.get(("haproxy-up-h1-new-noreuse",) + s["key"][1:])
            per = "—" if s["origin_accepts"] is None or not s["requests"] else f"{s['origin_accepts'] / s['requests']:.2f}"
            resumed = "—" if s["tls_handshakes"] is None else f"{s['tls_resumed']} of {s['tls_handshakes']}"
            md.append(f"| {label} | {h2_load(s['key'])} | {rps_cell(s)} | {fmt_us(s['p50'])} | {fmt_us(s['p99'])} | "
                      f"{fmt_cpu(s)} | {fmt_x(cpu_ratio(s, full))} | {per} | {resumed} | {busy_cell(s)} |")
    md += section_ratios(tls_summary(stats), stats)
    md += run_lines(runs)
    return md


def section_ratios(summary, stats):
    """A section's end: its ratios, and a warning when another process was busy during one of its runs."""
    md = [""]
    if summary:
        md += ["Ratios from this run:", ""] + [f"- {line}" for line in summary] + [""]
    if any(s["busy"] > BUSY_PCT for s in stats.values()):
        md += [f"\\* other processes used more than {BUSY_PCT:.0f}% of the machine during a run of this row: "
               "noisy figure, rerun on an idle machine.", ""]
    return md


def run_lines(runs):
    md = ["| row | load | run | per s | count | origin requests | new origin conns | non-2xx | errors | "
          "client CPU µs each | other load % |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        errors = ", ".join(f"{k} {v}" for k, v in r["errors"].items() if v) or "0"
        client = "—" if r.get("client_cpu_us_per_req") is None else f"{r['client_cpu_us_per_req']:.1f}"
        md.append(f"| {r['name']} | {r['body']} × {r['conns']} | {r['rep']} | {r['rps'] or 0:.0f} | {r['requests']} | "
                  f"{r.get('origin_requests')} | {r.get('origin_accepts')} | {r['non2xx']} | {errors} | {client} | "
                  f"{r['other_cpu_pct']} |")
    return md + [""]


def tls_summary(stats):
    out = []
    for g in h2_find(stats, "gateway-intercept-tls"):
        h = stats.get(("haproxy-tls-term",) + g["key"][1:])
        if not h:
            continue
        r = cpu_ratio(g, h)
        line = (f"new intercepted connections ({g['key'][2]} in flight): gateway {fmt_rps(g['rps'])} conn/s, HAProxy "
                f"terminating TLS {fmt_rps(h['rps'])} ({fmt_ratio(g['rps'], h['rps'])}×); CPU per connection "
                f"{fmt_cpu(g, ' µs')} vs {fmt_cpu(h, ' µs')} ({fmt_x(r)})")
        if r:
            line += f", i.e. {fmt_rps(capacity(g))} vs {fmt_rps(capacity(h))} connections per CPU-second ({1 / r:.2f}×)"
        if min(g.get("load_busy") or 0, h.get("load_busy") or 0) >= LOAD_BOUND_PCT:
            line += (". Both rows were bound by the load CPU (client and origin busy "
                     f"{g['load_busy']:.0f}% / {h['load_busy']:.0f}%): their conn/s is that CPU's pace, the connections "
                     "per CPU-second of each proxy are the comparable figure")
        out.append(line)
    full = None
    for g in h2_find(stats, "gateway-up-h1-new"):
        for other, label in (("haproxy-up-h1-new", "HAProxy resuming its TLS session"),
                             ("haproxy-up-h1-new-noreuse", "HAProxy with no-ssl-reuse")):
            o = stats.get((other,) + g["key"][1:])
            if not o:
                continue
            resumed = f"; origin: gateway {g['tls_resumed']} of {g['tls_handshakes']} handshakes resumed, HAProxy " \
                      f"{o['tls_resumed']} of {o['tls_handshakes']}" if g["tls_handshakes"] is not None and \
                                                                        o["tls_handshakes"] is not None else ""
            out.append(f"new upstream TLS connection per request ({h2_load(g['key'])}), gateway vs {label}: "
                       f"{fmt_rps(g['rps'])} vs {fmt_rps(o['rps'])} req/s ({fmt_ratio(g['rps'], o['rps'])}×); CPU per request "
                       f"{fmt_cpu(g, ' µs')} vs {fmt_cpu(o, ' µs')} ({fmt_x(cpu_ratio(g, o))}){resumed}")
    return out


def ws_section(runs):
    if not runs:
        return []
    stats = ext_stats(runs)
    md = ["## WebSocket messages (issue 57)", "",
          "`scripts/bench.sh --only websocket`. `scripts/bench/ws_load.py` (CPU 0) opens C WebSockets to "
          "`scripts/bench/ws_sink.py` (Python, frames by hand, on CPU 0 beside the client) and sends binary messages of one size (client to server, masked) for the run's seconds; the sink counts "
          "what arrives, and the rate is its count over the time to its last answer. Through a proxy the handshake "
          "is an absolute-form `GET http://127.0.0.1:SINK/sink` with `Upgrade: websocket` (the gateway's default "
          "config; HAProxy the forward proxy of the HTTP/1.1 rows), after which both carry the bytes. The direct, "
          "gateway and HAProxy runs alternate, all with the client and sink on CPU 0: the direct row is their own "
          "ceiling there, and ×direct what a proxy on CPU 1 takes from it. The last row: direct with the sink on "
          "CPU 1 (two CPUs for the endpoints, as nginx in the HTTP/1.1 direct rows), run after the others. "
          "CPU µs/msg = the proxy's CPU time ÷ messages.", "",
          "| path | message | conns | msg/s | MB/s | ×direct | ×HAProxy | CPU µs/msg (user / kernel) | CPU ÷ HAProxy "
          "| load / proxy CPU busy |", "|---|---|---|---|---|---|---|---|---|---|"]
    loads = []
    for key in stats:
        if key[1:] not in loads:
            loads.append(key[1:])
    for load in loads:
        direct, haproxy = stats.get(("direct-ws",) + load), stats.get(("haproxy-ws",) + load)
        for name, label in WS_ROWS:
            s = stats.get((name,) + load)
            if s is None:
                continue
            mb = " / ".join(f"{v:.0f}" for v in s["mb_runs"]) or "—"
            md.append(f"| {label} | {SIZE_LABELS.get(load[0], load[0])} | {load[1]} | {rps_cell(s)} | {mb} | "
                      f"{fmt_ratio(s['rps'], direct and direct['rps'])} | {fmt_ratio(s['rps'], haproxy and haproxy['rps'])} | "
                      f"{fmt_cpu(s)} | {fmt_x(cpu_ratio(s, haproxy))} | {busy_cell(s)} |")
    md += section_ratios(ws_summary(stats), stats)
    md += run_lines(runs)
    return md


def ws_summary(stats):
    out = []
    for g in h2_find(stats, "gateway-ws"):
        load = g["key"][1:]
        d, h = stats.get(("direct-ws",) + load), stats.get(("haproxy-ws",) + load)
        what = f"WebSocket {SIZE_LABELS.get(load[0], load[0])} messages × {load[1]} conn"
        parts = [f"gateway {fmt_rps(g['rps'])} msg/s ({g['mb']:.0f} MB/s)" if g.get("mb") is not None
                 else f"gateway {fmt_rps(g['rps'])} msg/s"]
        if d:
            parts.append(f"{fmt_ratio(g['rps'], d['rps'])}× direct's {fmt_rps(d['rps'])}")
        if h:
            parts.append(f"HAProxy {fmt_rps(h['rps'])} ({fmt_ratio(g['rps'], h['rps'])}×); CPU per message "
                         f"{fmt_cpu(g, ' µs')} vs {fmt_cpu(h, ' µs')} ({fmt_x(cpu_ratio(g, h))})")
        else:
            parts.append(f"CPU per message {fmt_cpu(g, ' µs')}")
        out.append(f"{what}: " + ", ".join(parts))
    return out


def targets_57(h2, tls, ws):
    """Issue 57's targets that the TLS and WebSocket rows measure (the HTTP/2 ones: h2_summary)."""
    out = []
    for g in h2_find(tls, "gateway-intercept-tls"):
        h = tls.get(("haproxy-tls-term",) + g["key"][1:])
        if h:
            r = g["rps"] / h["rps"]
            c = cpu_ratio(h, g)
            out.append(f"- new TLS connections per second through interception (cached leaf) ≥ 0.8× HAProxy's: "
                       f"{r:.2f}× — {verdict(r >= 0.8)}" + (f"; per CPU-second of each proxy {c:.2f}× — {verdict(c >= 0.8)}"
                                                           if c else ""))
    for g in h2_find(ws, "gateway-ws"):
        d = ws.get(("direct-ws",) + g["key"][1:])
        spread = ws.get(("direct-ws-spread",) + g["key"][1:])
        if d:
            r = g["rps"] / d["rps"]
            out.append(f"- WebSocket message throughput ≥ 0.9× a direct connection's "
                       f"({SIZE_LABELS.get(g['key'][1], g['key'][1])} × {g['key'][2]}): {r:.2f}× — {verdict(r >= 0.9)}"
                       + (f" (against the direct row with the sink on CPU 1: {g['rps'] / spread['rps']:.2f}×)" if spread else ""))
    return out


def main():
    workdir, out_path = sys.argv[1], sys.argv[2]
    with open(os.path.join(workdir, "meta.json")) as f:
        meta = json.load(f)
    runs = load_jsonl(os.path.join(workdir, "runs.jsonl"))
    # The HTTP/2 rows (bench.sh --only http2): a section of their own; alone (no other row in
    # the run), the sections of the HTTP/1.1 rows are left out.
    h2_runs = load_jsonl(os.path.join(workdir, "runs-h2.jsonl"))
    h2_protocols = lines_of(os.path.join(workdir, "h2-protocols.txt"))
    # The TLS handshake and WebSocket rows (issue 57): sections of their own, as the HTTP/2 rows'.
    tls_runs = load_jsonl(os.path.join(workdir, "runs-tls.jsonl"))
    ws_runs = load_jsonl(os.path.join(workdir, "runs-ws.jsonl"))
    classic = bool(runs) or not (h2_runs or tls_runs or ws_runs)
    extras_path = os.path.join(workdir, "gateway-extras.json")
    extras = json.load(open(extras_path)) if os.path.exists(extras_path) else {}
    order = []
    for r in runs:
        if r["name"] not in order:
            order.append(r["name"])
    rows, stats = table(runs, order)
    busy = [r for r in runs if (r.get("other_cpu_pct") or 0) > BUSY_PCT]
    h2s, tlss, wss = h2_stats(h2_runs), ext_stats(tls_runs), ext_stats(ws_runs)
    # Every ratio of this run in one place (also printed at the end): gateway ÷ HAProxy (or ÷ direct),
    # with each proxy's CPU per request and its user-space and kernel parts.
    summaries = [("CPU per request (1k, 50 conns)", cpu_summary(stats)), ("HTTP/2", h2_summary(h2s)),
                 ("TLS handshakes", tls_summary(tlss)), ("WebSocket", ws_summary(wss))]
    targets57 = targets_57(h2s, tlss, wss)
    md = [f"# Benchmark results", "",
          f"`{meta['command']}` — {meta['date']}, {meta['machine']}", "",
          f"{meta['seconds']} s per run ({meta['mitm_seconds']} s for mitmdump), {meta['repeat']} run(s) per figure "
          "(req/s lists each run; the other columns are means). wrk -t1 and the nginx origin on CPU 0, the proxy "
          "on CPU 1 (direct: nginx on CPU 1). CPU µs/req = the proxy's CPU time (all its processes) ÷ requests. "
          "RSS = VmRSS summed over the proxy's processes, before the run / peak during it (each proxy is "
          "started fresh before its first row, 1k × 50, so that row's idle figure is the fresh process's).", ""]
    if any(lines for _, lines in summaries):
        md += ["## Summary (this run)", ""]
        for title, lines in summaries:
            if lines:
                md += [f"{title}:", ""] + [f"- {line}" for line in lines] + [""]
        if targets57:
            md += ["Issue 57's targets measured here:", ""] + targets57 + [""]
    if classic:
        md += rows
        md.append("")
        if busy:
            md.append(f"\\* other processes used more than {BUSY_PCT:.0f}% of the machine during a run of this row "
                      f"(max {max(r['other_cpu_pct'] for r in busy):.0f}%): noisy figure, rerun on an idle machine.")
            md.append("")
        if any(r.get("expect_read_errors") and r["errors"]["read"] for r in runs):
            md.append("† closes the client connection after every response (no keep-alive): wrk counts a read "
                      "error per request and reconnects.")
            md.append("")
        md += ["## Gateway memory", ""] + (extras_lines(extras) or ["- not measured"]) + [""]
        ratios = cpu_ratio_lines(stats)
        if ratios:
            md += ["## CPU per request: gateway ÷ HAProxy (same run)", "",
                   "Each gateway config's CPU µs/req divided by HAProxy's from this run (rows above): the default "
                   "config (gateway.yaml), the typical policies (gateway-policies.yaml: bearer auth, endpoint template, "
                   "retry, rate limit, metrics) and debug traces on (gateway-traces.yaml); then typical, traces and "
                   "OpenTelemetry tracing at sampling 1.0 (gateway-otel.yaml) divided by the default config, and the "
                   "default config at `log_level: info` (gateway-log-info) divided by it at `warning`.", ""] + ratios + [""]
        sizes = size_lines(stats)
        if sizes:
            md += ["## CPU per request: config size ÷ one upstream (same run)", "",
                   "The gateway with one upstream (the request's), with 500 upstreams and the request for the last by "
                   "exact host and by `*.suffix`, and with one upstream and 2,000 deny rules the request passes "
                   "(scripts/bench/config_size.py); their runs alternate, and each row's CPU µs/req is divided by one "
                   "upstream's.", ""] + sizes + [""]
        targets_40 = cpu_targets_40(stats) + size_targets(stats)
        if targets_40:
            md += ["## Targets (issue 40)", ""] + targets_40 + [""]
        md += ["## Targets (issue 14)", ""] + (targets_14(stats) or ["- not measured (needs gateway, gateway-policies, "
                                                                      "gateway-traces and haproxy rows)"]) + [""]
        md += ["## Targets (issue 38)", ""] + (targets_38(stats) or ["- not measured (needs gateway and gateway-otel rows)"]) + [""]
        md += ["## Targets (issue 9)", ""] + targets(stats, extras, order) + [""]
    md += h2_section(h2_runs, h2_protocols)
    md += tls_section(tls_runs)
    md += ws_section(ws_runs)
    md += kept_section(out_path, ALLOCS_TITLE)
    if classic:
        md += ["## Runs", "",
               "Every wrk run: origin requests and new origin connections during it (from nginx stub_status; a "
               "proxy that reuses connections opens few), and the CPU share used by other processes.", "",
               "| proxy | body | conns | run | req/s | requests | origin requests | new origin conns | "
               "non-2xx | socket errors | other load % |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in runs:
            md.append(f"| {r['name']} | {r['body']} | {r['conns']} | {r['rep']} | {r['rps'] or 0:.0f} | {r['requests']} | "
                      f"{r['origin_requests']} | {r['origin_accepts']} | {r['non2xx']} | "
                      f"{sum(r['errors'].values())} | {r['other_cpu_pct']} |")
        md.append("")
    versions, notes, failures = (lines_of(os.path.join(workdir, n)) for n in ("versions.txt", "notes.txt", "failures.txt"))
    md += ["## Versions", ""] + [f"- {v}" for v in versions] + [""]
    if failures:
        md += ["## FAILURES", ""] + [f"- {n}" for n in failures] + [""]
    if notes:
        md += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    text = "\n".join(md)
    with open(out_path, "w") as f:
        f.write(text)
    print(text)
    for title, lines in summaries:
        if lines:
            print(f"\n## Summary: {title} (this run)\n")
            for line in lines:
                print(f"- {line}")
    if targets57:
        print("\n## Issue 57's targets (this run)\n")
        print("\n".join(targets57))


if __name__ == "__main__":
    main()
